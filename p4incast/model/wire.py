"""Sizes on the wire, each named once with its unit.

A full-size TCP segment of p4-incast's hosts (1500-byte IP MTU, TCP
timestamps on) carries MSS_BYTES of payload. Its IP packet is IP_MTU_BYTES;
the Ethernet frame as a NIC or BMv2 hands it over (no FCS) is
ETH_FRAME_BYTES; on a 1 Gbit/s wire it occupies WIRE_FRAME_BYTES of time
(+ 4 FCS + 8 preamble/SFD + 12 inter-frame gap). ACK_WIRE_BYTES is a pure
ACK's wire time (64-byte minimum frame + 20 bytes of preamble and gap).
"""

MSS_BYTES = 1448  # TCP payload of a full segment: 1500 - 20 (IP) - 20 (TCP) - 12 (timestamps)
IP_MTU_BYTES = 1500  # IP packet of a full segment
ETH_FRAME_BYTES = 1514  # Ethernet frame without FCS: 14 + 1500 (what a buffer holds)
WIRE_FRAME_BYTES = 1538  # wire time of a full frame: 1514 + 4 FCS + 8 preamble + 12 IFG
ACK_WIRE_BYTES = 84  # wire time of a minimum (64-byte) frame: + 8 preamble + 12 IFG
