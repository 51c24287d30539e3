// MIRROR of Google's libwebrtc Objective-C API (module `WebRTC` of the stasel/WebRTC binary
// distribution), for running Parley's Apple media engine on Linux (AppleCheck/README.md).
// Only what ParleySDKApple's AppleMediaEngine uses, declared as Swift imports the headers
// of sdk/objc (each type cites its header), and implemented over Parley's own media leg.
// Apple framework modules export Foundation to their importers; the stasel module's
// umbrella header imports Foundation too, so the mirror does the same.
@_exported import Foundation
