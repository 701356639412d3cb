// The route behind the app's proxy.ts or middleware.ts (test/runtimes/next-app.test.ts): what an admitted request gets.
export default function hello(request, response) {
  response.status(200).json({ hello: 'world' });
}
