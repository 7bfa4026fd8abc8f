import Testing

/// Every test that opens sockets, threads or descriptors lives under this serialized suite, so descriptor
/// counts taken by one test are not disturbed by another test of this target running at the same time.
@Suite(.serialized) enum LoopbackTests {}
