// How deep a test goes. One list for the fleet file, the API, the store and the bus.

/**
 * handshake: open a conversation; conformance: open it, then run the era's checks (and read the
 * surface of the era it negotiated); surface: read what the server offers in each era it speaks;
 * script: run the test's scripted steps in its revision.
 */
export const TEST_DEPTHS = ['handshake', 'conformance', 'surface', 'script'] as const;
export type TestDepth = (typeof TEST_DEPTHS)[number];
