"""tcp_info reader (not yet implemented)."""

NAME = "tcp_info"
KIND = "tcp_instrumentation"
TOOL = "tcp"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
