#!/usr/bin/env python3
"""Capture a real aiortc audio offer, restricted to loopback.

aioice normally skips 127.0.0.1 and would gather this machine's outside address;
replacing get_host_addresses keeps every candidate on loopback. No STUN/TURN servers
are configured, so nothing leaves the machine.

Usage: python3 capture_aiortc.py OUT.sdp
"""
import asyncio
import sys

import aioice.ice

aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"]

from aiortc import RTCConfiguration, RTCPeerConnection  # noqa: E402
from aiortc.mediastreams import AudioStreamTrack  # noqa: E402


async def main(out_path: str) -> None:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(AudioStreamTrack())
    offer = await pc.createOffer()
    await pc.setLocalDescription(offer)  # waits for ICE gathering to complete
    sdp = pc.localDescription.sdp
    await pc.close()
    with open(out_path, "wb") as f:
        f.write(sdp.encode("utf-8"))
    print(f"wrote {out_path} ({len(sdp)} bytes)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "aiortc-offer.sdp"))
