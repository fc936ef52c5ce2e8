mod agent;
mod harness;
mod print;
