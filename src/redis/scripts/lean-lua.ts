/**
 * A Lua script as Redis is sent it: `lua` without its comment lines, blank lines and indentation, every other line
 * as it is (so a comment must stand on a line of its own, and no string may span lines). Run when the sent script
 * is written (`npm run build:lua`) and by the tests that hold it equal to its source, never at run time.
 */
export function leanLua(lua: string): string {
  const lines = lua.split('\n').map((line) => line.trimStart());
  return `${lines.filter((line) => line !== '' && !line.startsWith('--')).join('\n')}\n`;
}
