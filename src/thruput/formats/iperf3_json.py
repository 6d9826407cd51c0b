"""iperf3_json reader (not yet implemented)."""

NAME = "iperf3_json"
KIND = "throughput"
TOOL = "iperf3"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
