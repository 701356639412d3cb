// Run by .github/workflows/release.yml before anything is tested or published: the pushed tag (`v0.6.0`) must be
// `v` followed by package.json's version, and jsr.json must carry the same version. Prints what differs and exits 1
// otherwise.
//
//   node scripts/check-release-tag.mjs v0.6.0
import { readFileSync } from 'node:fs';

const read = (file) => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'));
const tag = process.argv[2] ?? '';
const { version } = read('package.json');
const jsr = read('jsr.json').version;
const problems = [];
if (tag !== `v${version}`) problems.push(`the tag ${JSON.stringify(tag)} is not v${version}, package.json's version`);
if (jsr !== version) problems.push(`jsr.json's version ${JSON.stringify(jsr)} is not ${version}, package.json's`);
for (const problem of problems) console.error(`check-release-tag: ${problem}.`);
if (problems.length === 0) console.log(`check-release-tag: ${tag} is the version of package.json and jsr.json.`);
process.exitCode = problems.length === 0 ? 0 : 1;
