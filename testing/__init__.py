"""Helpers shared by gitive's tests: hermetic git, throwaway repositories and remotes, record builders."""
