import { assert, describe, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { terminalLine, terminalText } from "../src/Terminal.js"

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

describe("Terminal", () => {
  it("shows OSC 8 hyperlinks, CSI screen clears and C1 controls visibly", () => {
    assert.strictEqual(terminalLine("\u001b]8;;http://evil\u0007click\u001b]8;;\u0007"), "␛]8;;http://evil␇click␛]8;;␇")
    assert.strictEqual(terminalLine("a\u001b[2Jb"), "a␛[2Jb")
    assert.strictEqual(terminalLine("\u009b2J \u007f"), "\\u{9b}2J ␡")
  })

  it("shows bidi overrides and isolates, which reorder what a person reads", () => {
    assert.strictEqual(terminalLine("safe\u202egpj.exe"), "safe\\u{202e}gpj.exe")
    assert.strictEqual(terminalLine("\u2066x\u2069\u200f"), "\\u{2066}x\\u{2069}\\u{200f}")
  })

  it("a line keeps no line break; a body keeps its line feeds, tabs and CRLF but no lone carriage return", () => {
    assert.strictEqual(terminalLine("a\nb\tc\r"), "a␊b␉c␍")
    assert.strictEqual(terminalText("a\r\nb\n\tc\rd\u001b[2J"), "a\r\nb\n\tc␍d␛[2J")
  })

  it("leaves ordinary text alone, accents, CJK and emoji included", () => {
    const text = "Café — テスト 🚀 [link](x.md)"
    assert.strictEqual(terminalLine(text), text)
    assert.strictEqual(terminalText(text), text)
  })

  it("never lets a control character through, and changes text without one not at all", () => {
    FastCheck.assert(FastCheck.property(FastCheck.string({ unit: "binary" }), (s) => {
      assert.isFalse(UNSAFE.test(terminalLine(s)))
      // a body may keep line feeds, tabs and the CR of a CRLF, nothing else
      assert.isFalse(UNSAFE.test(terminalText(s).replace(/\r\n|\n|\t/g, "")))
      if (!UNSAFE.test(s)) assert.strictEqual(terminalLine(s), s)
    }))
  })
})
