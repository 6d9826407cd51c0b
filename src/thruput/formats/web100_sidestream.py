"""web100_sidestream reader (not yet implemented)."""

NAME = "web100_sidestream"
KIND = "tcp_instrumentation"
TOOL = "web100"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
