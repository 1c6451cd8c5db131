"""The memory library: every memory of the project, memcurate's and Claude's own, in one place.

entries.py (Entry, refs, LibraryError), catalog.py (every entry; one read whole), search.py (full-text
search as you type). Front ends call the Engine (`library`, `library_entry`, `library_search`).
"""
