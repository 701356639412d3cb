// What examples/snippets/edge-nextjs-middleware.ts imports from `next/server`, in place of Next.js
// when test/runtimes/edge-snippets.test.ts bundles it for the edge runtime: NextResponse.next()
// marks the response as Next.js does (`x-middleware-next: 1`, the request goes on), and
// NextResponse.json is Response.json. Checked against the declared types (next-server-types.d.ts).
import type * as Declared from 'next/server';

export type NextRequest = Declared.NextRequest;

export class NextResponse extends Response {
  static next(init?: { headers?: Record<string, string> }): NextResponse {
    const headers = new Headers(init?.headers);
    headers.set('x-middleware-next', '1');
    return new NextResponse(null, { headers });
  }

  static override json(body: unknown, init?: ResponseInit): NextResponse {
    const headers = new Headers(init?.headers);
    headers.set('content-type', 'application/json');
    return new NextResponse(JSON.stringify(body), { ...init, headers });
  }
}

export const declared: typeof Declared.NextResponse = NextResponse;
