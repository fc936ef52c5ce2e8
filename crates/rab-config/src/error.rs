//! Configuration errors: each names the file and what to change.

use std::path::PathBuf;

/// A configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not valid JSON or does not have the expected shape.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What serde found wrong.
        message: String,
    },
    /// The content is well-formed but not usable.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// `--profile NAME` names a profile no settings file defines.
    #[error("unknown profile \"{name}\"; {known}")]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The profiles there are, in words.
        known: String,
    },
    /// Neither `RAB_HOME` nor `HOME` is set.
    #[error("cannot find rab's home: set RAB_HOME or HOME")]
    NoHome,
}

impl Error {
    pub(crate) fn parse(path: &std::path::Path, e: &serde_json::Error) -> Self {
        Error::Parse {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
        }
    }
}

/// Reads a file, `Ok(None)` when it does not exist.
pub(crate) fn read_optional(path: &std::path::Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io { path: path.to_owned(), source }),
    }
}
