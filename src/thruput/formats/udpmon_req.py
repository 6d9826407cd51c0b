"""udpmon_req reader (not yet implemented)."""

NAME = "udpmon_req"
KIND = "latency_scan"
TOOL = "udpmon"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
