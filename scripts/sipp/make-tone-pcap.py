#!/usr/bin/env python3
"""Writes a pcap of RTP packets carrying a sine tone in PCMU (G.711 mu-law, payload type 0),
20 ms a packet, for SIPp's play_pcap_audio (uas-early-media.xml plays tone-1000hz-pcmu.pcap
as its ringback). SIPp sends each packet's UDP payload at the offset its timestamp gives,
to the address the far side's SDP names: the addresses and ports written here are not used.

    python3 make-tone-pcap.py OUT.pcap [FREQUENCY_HZ] [SECONDS]
"""
import math
import struct
import sys

SAMPLE_RATE = 8000
SAMPLES_PER_PACKET = 160  # 20 ms


def mu_law(sample):
    """G.711 mu-law code of a 16-bit linear sample (14-bit magnitude, bias 33)."""
    negative = sample < 0
    magnitude = ((~sample) >> 2) if negative else (sample >> 2)
    magnitude = min(magnitude, 8158) + 33
    segment = 0
    while segment < 7 and magnitude >= (0x40 << segment):
        segment += 1
    code = (segment << 4) | ((magnitude >> (segment + 1)) & 0x0F)
    return code ^ (0x7F if negative else 0xFF)


def ip_checksum(header):
    total = sum(struct.unpack("!10H", header))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def packets(frequency, seconds):
    count = int(seconds * SAMPLE_RATE / SAMPLES_PER_PACKET)
    for index in range(count):
        first = index * SAMPLES_PER_PACKET
        payload = bytes(mu_law(int(0.5 * 32767 * math.sin(2 * math.pi * frequency * (first + n) / SAMPLE_RATE)))
                        for n in range(SAMPLES_PER_PACKET))
        marker = 0x80 if index == 0 else 0
        rtp = struct.pack("!BBHII", 0x80, marker | 0, index & 0xFFFF, first, 0x5EED70E5) + payload
        udp = struct.pack("!HHHH", 6000, 6000, 8 + len(rtp), 0) + rtp
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), index & 0xFFFF, 0, 64, 17, 0,
                         bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
        ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
        ethernet = bytes(6) + bytes(6) + struct.pack("!H", 0x0800)
        yield index * SAMPLES_PER_PACKET / SAMPLE_RATE, ethernet + ip + udp


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    frequency = float(sys.argv[2]) if len(sys.argv) > 2 else 1000.0
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5
    with open(sys.argv[1], "wb") as out:
        # Global header: little-endian magic, version 2.4, UTC, snaplen, Ethernet links.
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for offset, frame in packets(frequency, seconds):
            whole = int(offset)
            out.write(struct.pack("<IIII", whole, int(round((offset - whole) * 1e6)), len(frame), len(frame)))
            out.write(frame)


if __name__ == "__main__":
    main()
