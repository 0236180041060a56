/**
 * Every file of the repository that a workflow names (a script it runs, a settings file, a page
 * its comments point to) is in git: a file that only exists on a developer's disk (once hidden by a
 * .gitignore rule, say) makes every run of the workflow fail in a fresh clone.
 */
import { execFileSync } from "child_process";
import { readFileSync } from "fs";
import { resolve } from "path";

const ROOT = resolve(__dirname, "../..");
const tracked = execFileSync("git", ["-C", ROOT, "ls-files", "--cached"], { encoding: "utf8" })
  .split("\n")
  .filter(Boolean);
const topLevel = new Set(tracked.map((file) => file.split("/")[0]));
const workflowFiles = tracked.filter((file) => /^\.github\/workflows\/[^/]+\.ya?ml$/.test(file));

/**
 * The repository paths in a text: each run of path characters with a slash, from its first
 * segment that is a top-level entry of the repository ($GITHUB_WORKSPACE/scripts/x.sh names
 * scripts/x.sh; refs/heads/main and cdktf.out/stacks/… name nothing in git).
 */
function repositoryPaths(text: string): string[] {
  const paths = new Set<string>();
  for (const [token] of text.matchAll(/[\w.-]+(?:\/[\w.-]+)+\/?/g)) {
    const segments = token.split("/");
    const start = segments.findIndex((segment, i) => i < segments.length - 1 && topLevel.has(segment));
    // A sentence's full stop or a directory's slash ends no file name.
    if (start >= 0)
      paths.add(
        segments
          .slice(start)
          .join("/")
          .replace(/[./]+$/, ""),
      );
  }
  return [...paths].sort();
}

describe("the files the workflows name", () => {
  it("finds the paths in a workflow's text", () => {
    expect(
      repositoryPaths(
        'run: node scripts/ci/a.js "$RUNNER_TEMP/jest.json" && bash "$GITHUB_WORKSPACE/scripts/ci/b.sh"\n' +
          "# see docs/github-actions.md. Also refs/heads/main, cdktf.out/stacks/x and https://docs.github.com/en/actions\n" +
          "uses: actions/checkout@08c6903cd8c0fde910a37f88322edcfb5dd907a8",
      ),
    ).toEqual(["docs/github-actions.md", "scripts/ci/a.js", "scripts/ci/b.sh"]);
  });

  it.each(workflowFiles)("%s names only files that are in git", (workflow) => {
    const named = repositoryPaths(readFileSync(resolve(ROOT, workflow), "utf8"));
    expect(named.length).toBeGreaterThan(0);
    const missing = named.filter(
      (path) => !tracked.includes(path) && !tracked.some((file) => file.startsWith(`${path}/`)),
    );
    expect(missing).toEqual([]);
  });
});
