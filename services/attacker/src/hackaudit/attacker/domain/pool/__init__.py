"""The reference pool that V is measured on: semantics-preserving rewrites of gold (C+) and
reference mutants (C-)."""
