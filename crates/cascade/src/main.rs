//! The `cascade` command.
fn main() {}
