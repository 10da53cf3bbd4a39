// Next's ambient types (what its generated next-env.d.ts holds, which is not kept: it points into
// .next/, absent before a build, and the type check runs before the build).
/// <reference types="next" />
/// <reference types="next/image-types/global" />
