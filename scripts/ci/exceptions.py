"""
The one reader of the CI scans' exceptions files: scripts/ci/checkov-exceptions.txt (scan.sh) and
scripts/ci/zizmor-exceptions.txt (lint-workflows.sh).

The format: one exception per line, the fields of its key separated by white space, then the reason
(required); blank lines and lines starting with # are ignored; a key listed twice is refused.
"""
import re


class ExceptionsFileError(Exception):
    """A bad line of an exceptions file, as `FILE:LINE: what is wrong`."""


def read_exceptions(path, fields, shown=None):
    """
    The exceptions of the file at `path`, as {key: reason}. `fields` names the key's fields in order,
    each (NAME, PATTERN, WHAT): PATTERN (None: any word) must match the whole field, else the line is
    refused as not WHAT. A key of one field is that string; of several, the tuple of them. `shown` is
    the file's name in messages (default: `path`).
    """
    shown = shown or path
    usage = " ".join(name for name, _, _ in fields) + " reason"
    exceptions = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, len(fields))
            if len(parts) <= len(fields) or not parts[-1].strip():
                raise ExceptionsFileError(f"{shown}:{number}: expected '{usage}', with a reason")
            values = parts[:-1]
            for (_, pattern, what), value in zip(fields, values):
                if pattern is not None and not re.fullmatch(pattern, value):
                    raise ExceptionsFileError(f"{shown}:{number}: '{value}' is not {what}")
            key = values[0] if len(values) == 1 else tuple(values)
            if key in exceptions:
                raise ExceptionsFileError(f"{shown}:{number}: {' '.join(values)} is listed twice")
            exceptions[key] = parts[-1].strip()
    return exceptions
