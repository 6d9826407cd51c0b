"""web100_snaplog reader (not yet implemented)."""

NAME = "web100_snaplog"
KIND = "tcp_instrumentation"
TOOL = "web100"
BINARY = True


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
