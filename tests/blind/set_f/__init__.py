"""Blind set F: held-out learner answers (see README.md)."""
