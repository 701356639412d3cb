// The part of Next.js's `next/server` that examples/snippets/edge-nextjs-middleware.ts uses, for type-checking
// it without Next.js installed (the same names and shapes as Next.js 15's). At run time the test
// supplies next-server.ts in its place.
declare module 'next/server' {
  /** The request a middleware gets: a web Request, with Next.js's parsed URL. */
  export interface NextRequest extends Request {
    readonly nextUrl: URL;
  }
  /** A web Response, and what a middleware returns to let the request go on. */
  export class NextResponse extends Response {
    /** Lets the request go on to its route, with these headers on the response. */
    static next(init?: { headers?: Record<string, string> }): NextResponse;
    static json(body: unknown, init?: ResponseInit): NextResponse;
  }
}
