"""``moveit.core`` stand-in (see ``moveit/__init__.py`` for the signature sources)."""
