// Placeholder: see docs/benchmarks.md.
fn main() {}
