"""Errors a user can act on: each carries a code from spec 003 and says what to fix."""

from __future__ import annotations

EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID = 0, 1, 2
"""Process exit codes: the scene closed (any reason); it failed; the input was invalid."""
EXIT_INTERRUPTED = 130  # Ctrl-C in a command with no graceful stop of its own (128 + SIGINT)


class PromptdeskError(Exception):
    """Base of every user-facing error. `code` is stable; the message names what to fix."""

    code = "ERROR"

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class InvalidConfig(PromptdeskError):
    """A scene file, a flag or a setting is wrong (names the file, field and line)."""

    code = "INVALID_CONFIG"


class CharacterLoadError(PromptdeskError):
    """A character could not be found or read (names the paths searched)."""

    code = "CHARACTER_LOAD_ERROR"


class ProviderError(PromptdeskError):
    """A provider failed for good (after retries, or with an error that is never retried).

    `usage` is what the provider billed for the call's failed attempts before it failed (a
    `promptdesk.core.providers.base.Usage`: a stream's `message_start` or usage chunk that arrived before it
    broke), None when nothing billed was seen; the call's record counts it."""

    code = "PROVIDER_ERROR"

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False,
                 usage: object | None = None, **context: object) -> None:
        super().__init__(message, **context)
        self.status = status
        self.retryable = retryable
        self.usage = usage


class NotARun(PromptdeskError):
    """A folder given as a run folder is not one (or lacks what the command needs); exit 2."""

    code = "NOT_A_RUN"


class RecordingError(PromptdeskError):
    """The run folder could not be written (a full disk, a permission, a lost mount). The run stops:
    a record that is no longer being kept is not an experiment. Exit 1, never a false close reason.
    A command's own output that cannot be written (`> file` on a full disk) is said with this code too."""

    code = "RECORDING_ERROR"


RUN_ADVICE = ("Free space or fix the permissions (or choose another --out) and run again; everything recorded "
              "before this point is kept")


def recording_error(exc: OSError, what: str, advice: str = RUN_ADVICE) -> RecordingError:
    """A `RecordingError` that says plainly what failed and what to do about it (`advice`)."""
    import errno

    cause = {errno.ENOSPC: "the disk is full (No space left on device)",
             errno.EDQUOT: "the disk quota is exceeded",
             errno.EFBIG: "the file is larger than the system allows (File too large)",
             errno.EACCES: "permission denied", errno.EPERM: "permission denied",
             errno.EROFS: "the file system is read-only"}.get(exc.errno or 0, exc.strerror or str(exc))
    return RecordingError(f"could not write {what}: {cause}. {advice}", errno=exc.errno)
