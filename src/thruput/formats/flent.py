"""flent reader (not yet implemented)."""

NAME = "flent"
KIND = "throughput"
TOOL = "flent"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
