#!/usr/bin/env python3
"""Independent SRTP/SRTCP reference (RFC 3711, RFC 7714) used to produce the expected
packets in SRTPVectorTests.swift. Written from the RFCs over the `cryptography` package;
it shares no code with libsrtp.

It first checks itself against the RFCs' own vectors (RFC 3711 B.2 keystream, B.3 key
derivation, RFC 7714 16.1.1 and 17.1 at the session-key level), then derives session keys
from fixed master keys (as libsrtp does) and prints the protected packets as hex.

Run: python3 srtp_reference.py   (needs: pip install cryptography)
"""
import hashlib
import hmac
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def h(text):
    return bytes.fromhex("".join(text.split()))


def aes_ctr(key, iv16, data):
    enc = Cipher(algorithms.AES(key), modes.CTR(iv16)).encryptor()
    return enc.update(data) + enc.finalize()


def kdf(master_key, master_salt, label, length):
    """RFC 3711 4.3.1 with key_derivation_rate 0 (r = 0): AES-CM PRF over x = key_id XOR salt.
    A 96-bit GCM master salt is padded on the right to 112 bits (RFC 7714 11)."""
    salt = master_salt.ljust(14, b"\0")
    key_id = (label << 48).to_bytes(14, "big")   # label || r(48 bits), right-aligned
    x = bytes(a ^ b for a, b in zip(key_id, salt))
    return aes_ctr(master_key, x + b"\0\0", bytes(length))


def session_keys(master_key, master_salt, salt_len, rtcp):
    base = 3 if rtcp else 0
    return (kdf(master_key, master_salt, base, 16),
            kdf(master_key, master_salt, base + 1, 20),
            kdf(master_key, master_salt, base + 2, salt_len))


def rtp_header_len(pkt):
    n = 12 + 4 * (pkt[0] & 0x0F)
    if pkt[0] & 0x10:
        n += 4 + 4 * struct.unpack("!H", pkt[n + 2:n + 4])[0]
    return n


def cm_iv(salt14, ssrc, index):
    """RFC 3711 4.1.1: IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16)."""
    v = (int.from_bytes(salt14, "big") << 16) ^ (ssrc << 64) ^ (index << 16)
    return v.to_bytes(16, "big")


def cm_protect_rtp(keys, pkt, roc):
    enc, auth, salt = keys
    hl = rtp_header_len(pkt)
    seq, = struct.unpack("!H", pkt[2:4])
    ssrc, = struct.unpack("!I", pkt[8:12])
    out = pkt[:hl] + aes_ctr(enc, cm_iv(salt, ssrc, (roc << 16) | seq), pkt[hl:])
    tag = hmac.new(auth, out + struct.pack("!I", roc), hashlib.sha1).digest()[:10]
    return out + tag


def cm_protect_rtcp(keys, pkt, index):
    enc, auth, salt = keys
    ssrc, = struct.unpack("!I", pkt[4:8])
    out = pkt[:8] + aes_ctr(enc, cm_iv(salt, ssrc, index), pkt[8:]) + struct.pack("!I", 0x80000000 | index)
    return out + hmac.new(auth, out, hashlib.sha1).digest()[:10]


def gcm_protect_rtp(key, salt12, pkt, roc):
    """RFC 7714 8.1: IV = (00 00 || SSRC || ROC || SEQ) XOR salt; AAD = header."""
    hl = rtp_header_len(pkt)
    seq, = struct.unpack("!H", pkt[2:4])
    ssrc, = struct.unpack("!I", pkt[8:12])
    iv = bytes(a ^ b for a, b in zip(b"\0\0" + struct.pack("!IIH", ssrc, roc, seq), salt12))
    return pkt[:hl] + AESGCM(key).encrypt(iv, pkt[hl:], pkt[:hl])


def gcm_protect_rtcp(key, salt12, pkt, index):
    """RFC 7714 9.1: IV = (00 00 || SSRC || 00 00 || 0 || index) XOR salt;
    AAD = header (8) || E || index; the E+index word follows the tag."""
    ssrc, = struct.unpack("!I", pkt[4:8])
    iv = bytes(a ^ b for a, b in zip(b"\0\0" + struct.pack("!I", ssrc) + b"\0\0" + struct.pack("!I", index), salt12))
    e_index = struct.pack("!I", 0x80000000 | index)
    return pkt[:8] + AESGCM(key).encrypt(iv, pkt[8:], pkt[:8] + e_index) + e_index


def check(name, got, want):
    if got != want:
        raise SystemExit(f"SELF-CHECK FAILED {name}:\n got  {got.hex()}\n want {want.hex()}")
    print(f"ok   {name}")


# --- Self-checks against the RFCs' own vectors -------------------------------------------

# RFC 3711 B.2: AES-CM keystream, session key 2B7E..., salt F0F1...FCFD, SSRC 0, index 0.
check("RFC 3711 B.2 keystream (first 3 blocks)",
      aes_ctr(h("2B7E151628AED2A6ABF7158809CF4F3C"), cm_iv(h("F0F1F2F3F4F5F6F7F8F9FAFBFCFD"), 0, 0), bytes(48)),
      h("E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0"))

# RFC 3711 B.3: key derivation.
B3_KEY, B3_SALT = h("E1F97A0D3E018BE0D64FA32C06DE4139"), h("0EC675AD498AFEEBB6960B3AABE6")
check("RFC 3711 B.3 cipher key", kdf(B3_KEY, B3_SALT, 0, 16), h("C61E7A93744F39EE10734AFE3FF7A087"))
check("RFC 3711 B.3 cipher salt", kdf(B3_KEY, B3_SALT, 2, 14), h("30CBBC08863D8C85D49DB34A9AE1"))
check("RFC 3711 B.3 auth key", kdf(B3_KEY, B3_SALT, 1, 20), h("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))

# RFC 7714 16.1.1 / 17.1: AEAD_AES_128_GCM with the SESSION key and salt given directly.
GCM_KEY, GCM_SALT = h("000102030405060708090a0b0c0d0e0f"), h("517569642070726f2071756f")
RFC7714_RTP = h("8040f17b 8041f8d3 5501a0b2 47616c6c 69612065 7374206f 6d6e6973 20646976"
                "69736120 696e2070 61727465 73207472 6573")
RFC7714_RTCP = h("81c8000d 4d617273 4e545031 4e545032 52545020 0000042a 0000e930 4c756e61"
                 "deadbeef deadbeef deadbeef deadbeef deadbeef")
check("RFC 7714 16.1.1 SRTP AEAD_AES_128_GCM", gcm_protect_rtp(GCM_KEY, GCM_SALT, RFC7714_RTP, 0),
      h("8040f17b 8041f8d3 5501a0b2 f24de3a3 fb34de6c acba861c 9d7e4bca be633bd5 0d294e6f 42a5f47a"
        "51c7d19b 36de3adf 8833899d 7f27beb1 6a9152cf 765ee439 0cce"))
check("RFC 7714 17.1 SRTCP AEAD_AES_128_GCM", gcm_protect_rtcp(GCM_KEY, GCM_SALT, RFC7714_RTCP, 0x5D4),
      h("81c8000d 4d617273 63e94885 dcdab67c a727d766 2f6b7e99 7ff5c0f7 6c06f32d c676a5f1 730d6fda"
        "4ce09b46 86303ded 0bb9275b c84aa458 96cf4d2f c5abf872 45d9eade 800005d4"))

# --- Vectors for libsrtp: full SRTP from MASTER keys (session keys derived as above) ----------
print()
CM_RTP = h("800f1234 decafbad cafebabe") + bytes([0xAB]) * 16
CM_RTP_WRAP = h("800f0000 decafbad cafebabe") + bytes([0xAB]) * 16   # seq 0 after 65535: ROC 1
cm_rtp_keys = session_keys(B3_KEY, B3_SALT, 14, rtcp=False)
cm_rtcp_keys = session_keys(B3_KEY, B3_SALT, 14, rtcp=True)
gcm_rtp_keys = session_keys(GCM_KEY, GCM_SALT, 12, rtcp=False)
gcm_rtcp_keys = session_keys(GCM_KEY, GCM_SALT, 12, rtcp=True)
vectors = {
    "cmRTP (master = RFC 3711 B.3, seq 0x1234, ROC 0)": cm_protect_rtp(cm_rtp_keys, CM_RTP, 0),
    "cmRTPWrapped (seq 0x0000, ROC 1)": cm_protect_rtp(cm_rtp_keys, CM_RTP_WRAP, 1),
    "cmRTCP (RFC 7714 17 packet, SRTCP index 1)": cm_protect_rtcp(cm_rtcp_keys, RFC7714_RTCP, 1),
    "gcmRTP (master = RFC 7714 key/salt, RFC 7714 16 packet, ROC 0)": gcm_protect_rtp(gcm_rtp_keys[0], gcm_rtp_keys[2], RFC7714_RTP, 0),
    "gcmRTCP (RFC 7714 17 packet, SRTCP index 1)": gcm_protect_rtcp(gcm_rtcp_keys[0], gcm_rtcp_keys[2], RFC7714_RTCP, 1),
}
for name, value in vectors.items():
    print(f"{name}:\n  {value.hex()}")
