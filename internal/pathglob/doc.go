// Package pathglob matches project-relative paths against deny patterns
// such as ".env*", "*.pem" or ".ssh/**" ([files] deny).
//
// The patterns err on the side of refusing: a pattern matches at any depth
// (".git/**" also covers "vendor/lib/.git/config"), it covers everything
// inside a directory it matches ("*.key" covers "x.key/inner"), and case is
// ignored, so ".ENV" is as secret as ".env". Segments use path.Match syntax;
// a "**" segment stands for any number of directories, none included. A
// pattern that starts with "/" is anchored at the project root.
package pathglob
