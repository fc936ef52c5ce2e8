//! What keeps a session safe: the permission policy and its rules, the shell reader
//! deny rules rely on, Claude Code hooks, the secret firewall, and the gate every tool
//! call passes.

pub mod denied_files;
pub(crate) mod gate;
pub mod hooks;
pub mod permissions;
pub mod protected;
pub(crate) mod read_only;
pub mod rule_list;
pub mod secrets;
pub(crate) mod shell_scan;
