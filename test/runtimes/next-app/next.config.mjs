// The Next.js app of test/runtimes/next-app.test.ts, copied to a temp directory whose node_modules links to this
// repository's (next, react, react-dom, @upstash/redis) and holds the packed package. Turbopack compiles no file
// outside its root, so the root is `/`, above both.
export default { turbopack: { root: '/' } };
