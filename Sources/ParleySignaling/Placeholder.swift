// ParleySignaling: placeholder until its wire format lands.
internal import ParleyWireCore
