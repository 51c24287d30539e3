#!/usr/bin/env python3
"""Does aiortc accept the answer Parley writes to its offer?

Creates an aiortc offer (loopback only, as capture_aiortc.py), has the Swift test
`AnswerWriter` answer it, and applies the answer with setRemoteDescription.
Usage: check_aiortc_accepts.py WORK_DIR REPO_ROOT
"""
import asyncio
import os
import subprocess
import sys

import aioice.ice

aioice.ice.get_host_addresses = lambda use_ipv4=True, use_ipv6=True: ["127.0.0.1"]

from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription  # noqa: E402
from aiortc.mediastreams import AudioStreamTrack  # noqa: E402


async def main(work: str, root: str) -> int:
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(AudioStreamTrack())
    await pc.setLocalDescription(await pc.createOffer())
    with open(os.path.join(work, "aiortc-offer.sdp"), "w", encoding="utf-8") as f:
        f.write(pc.localDescription.sdp)
    subprocess.run(["swift", "test", "--skip-build", "--filter", "AnswerWriter"], cwd=root, check=True,
                   env=dict(os.environ, PARLEY_SDP_ANSWER_DIR=work), stdout=subprocess.DEVNULL)
    with open(os.path.join(work, "aiortc-answer.sdp"), encoding="utf-8") as f:
        answer = f.read()
    try:
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
        transceiver = pc.getTransceivers()[0]
        print(f"aiortc: ok (signalingState {pc.signalingState}, direction {transceiver.currentDirection})")
        status = 0
    except Exception as error:  # noqa: BLE001 - report whatever aiortc says
        print(f"aiortc: rejected: {error!r}")
        status = 1
    await pc.close()
    return status


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
