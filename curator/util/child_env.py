"""The environment variable set in every process memcurate starts (a `claude` drafter, the background
check): memcurate's hooks, fired from such a process, return at once, so nothing loops."""

CHILD_ENV = "MEMCURATE_CHILD"
