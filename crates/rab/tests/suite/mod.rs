mod harness;
mod print;
