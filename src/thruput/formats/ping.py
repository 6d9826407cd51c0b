"""ping reader (not yet implemented)."""

NAME = "ping"
KIND = "rtt"
TOOL = "ping"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
