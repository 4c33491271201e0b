"""Sizes on the wire, each named once with its unit.

A full-size TCP segment of p4-incast's hosts (1500-byte IP MTU, TCP
timestamps on) carries MSS_BYTES of payload. Its IP packet is IP_MTU_BYTES;
the Ethernet frame as a NIC or BMv2 hands it over (no FCS) is
ETH_FRAME_BYTES; on a 1 Gbit/s wire it occupies WIRE_FRAME_BYTES of time
(+ 4 FCS + 8 preamble/SFD + 12 inter-frame gap). ACK_WIRE_BYTES is a pure
ACK's wire time (64-byte minimum frame + 20 bytes of preamble and gap).

A switch buffer is sized in frames: QUEUED_FRAME_BYTES per full frame, on
both engines (BMv2's queue counts packets; the simulator's buffer counts
these bytes, so a buffer of Q·QUEUED_FRAME_BYTES holds Q full frames). The
ns-3 model's packet of a full segment is MODEL_PACKET_BYTES (PPP + IP + TCP
without options + MSS); its queue adds the rest of the frame to every packet
it admits, and its links the rest of the wire time as a gap.

The simulator can run a smaller segment (transport.mss_bytes: seed 003's
ns-2 packets carry 1000 bytes). ip_packet_bytes, eth_frame_bytes and
wire_frame_bytes give a full segment's sizes for any MSS, the one place that
relation is written; the model's queue and gap add the same bytes to every
packet, so its framing holds at any segment size.
"""

MSS_BYTES = 1448  # TCP payload of a full segment: 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps)
MIN_MSS_BYTES = 536  # the smallest segment a preset may ask for: TCP's default MSS (RFC 1122)
TCP_IP_HEADER_BYTES = 20 + 20 + 12  # IP, TCP, timestamp option
ETH_HEADER_BYTES = 14
ETH_WIRE_EXTRA_BYTES = 4 + 8 + 12  # FCS, preamble/SFD, inter-frame gap


def ip_packet_bytes(mss: int) -> int:
    """The IP packet of a full segment carrying `mss` bytes."""
    return mss + TCP_IP_HEADER_BYTES


def eth_frame_bytes(mss: int) -> int:
    """Its Ethernet frame without FCS (what a switch buffer holds of it)."""
    return ip_packet_bytes(mss) + ETH_HEADER_BYTES


def wire_frame_bytes(mss: int) -> int:
    """Its wire time on Ethernet, in bytes (frame + FCS + preamble + gap)."""
    return eth_frame_bytes(mss) + ETH_WIRE_EXTRA_BYTES


IP_MTU_BYTES = ip_packet_bytes(MSS_BYTES)  # 1500: IP packet of a full segment
ETH_FRAME_BYTES = eth_frame_bytes(MSS_BYTES)  # 1514 (what a buffer holds)
WIRE_FRAME_BYTES = wire_frame_bytes(MSS_BYTES)  # 1538
ACK_WIRE_BYTES = 84  # wire time of a minimum (64-byte) frame: + 8 preamble + 12 IFG
ACK_FRAME_BYTES = eth_frame_bytes(0)  # 66: a pure ACK with timestamps, as a buffer holds it
QUEUED_FRAME_BYTES = ETH_FRAME_BYTES  # one full frame of a switch buffer, both engines
MODEL_PACKET_BYTES = 2 + 20 + 20 + MSS_BYTES  # a full segment as ns-3 queues it: PPP, IP, TCP, MSS
# the model's wire time beyond its packet, the same for every segment size
MODEL_GAP_BYTES = WIRE_FRAME_BYTES - MODEL_PACKET_BYTES
