"""Removing ``.`` and ``..`` segments from a path."""


def remove_dot_segments(path):
    """``path`` with ``.`` segments dropped and each ``..`` cancelling the segment before it.

    An absolute path stays absolute (``..`` never climbs above the root) and a path that
    ended in a dot segment ends in ``/``: ``/a/b/..`` becomes ``/a/``. Empty segments
    (``//``) are kept.
    """
    segments = path.split("/")
    output = []
    for segment in segments:
        if segment == ".":
            continue
        if segment == "..":
            if output:
                output.pop()
            continue
        output.append(segment)
    return "/".join(output)
