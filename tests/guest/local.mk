# tests/guest/: the test-guest harness and the KVM VMM fixture.
