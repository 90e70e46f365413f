"""Lessons: what an agent learned, reviewed by a person, recalled by later sessions, forgettable everywhere."""
