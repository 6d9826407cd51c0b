"""iperf2 reader (not yet implemented)."""

NAME = "iperf2"
KIND = "throughput"
TOOL = "iperf2"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
