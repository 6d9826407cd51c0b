"""iperf2_csv reader (not yet implemented)."""

NAME = "iperf2_csv"
KIND = "throughput"
TOOL = "iperf2"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
