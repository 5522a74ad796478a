"""The client's version: the longrun release it belongs to (a test keeps it equal to the server's)."""
__version__ = "0.1.0"
