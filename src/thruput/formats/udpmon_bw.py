"""udpmon_bw reader (not yet implemented)."""

NAME = "udpmon_bw"
KIND = "udp_sweep"
TOOL = "udpmon"
BINARY = False


def sniff(head):
    return False


def parse(text):
    raise NotImplementedError(NAME)
