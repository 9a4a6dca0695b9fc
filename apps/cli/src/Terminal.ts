/**
 * Text from memory files (names, descriptions, bodies: some written by teammates or models) on a terminal. An
 * escape sequence there could clear the screen, retitle the window, plant a hyperlink or reorder what a person
 * reads, so every control character (C0 but line breaks and tabs in a body, DEL, C1) and every bidi control is
 * shown visibly instead: C0 as its Unicode control picture (ESC → `␛`), the others as `\u{…}`. Only for human
 * output: `--json` prints the exact text, since JSON escapes controls anyway.
 */

/** C0 controls, DEL, C1 controls, and the bidi embeddings, overrides, isolates and marks. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu

const visible = (char: string): string => {
  const code = char.codePointAt(0)!
  if (code < 0x20) return String.fromCodePoint(0x2400 + code)
  if (code === 0x7f) return "\u2421"
  return `\\u{${code.toString(16)}}`
}

/** One line of output (a name, a description, a path): every control is made visible, newlines too. */
export const terminalLine = (text: string): string => text.replace(UNSAFE, visible)

/** A multi-line body (`show`): line feeds, tabs and CRLF endings stay; every other control is made visible. */
export const terminalText = (text: string): string =>
  text.replace(
    UNSAFE,
    (char, offset: number, whole: string) =>
      char === "\n" || char === "\t" || (char === "\r" && whole[offset + 1] === "\n") ? char : visible(char)
  )
