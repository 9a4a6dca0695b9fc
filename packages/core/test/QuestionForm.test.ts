/**
 * `generalQuestionForm`: a request phrased as a question about the world (a difference, a definition, how something
 * works, who made it, its history, a recommendation), in the languages it knows; a request about the project's own
 * work is not one, whatever its words.
 */
import { assert, describe, it } from "@effect/vitest"
import { generalQuestionForm } from "../src/internal/text/questionForm.js"

describe("generalQuestionForm", () => {
  it("finds the frame of a general question in each language it knows", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["What's the difference between the Sharpe ratio and the Sortino ratio?", "what's the difference"],
      ["Who designed the Innovation card game?", "who designed"],
      ["What is a naked pair in Sudoku?", "what is a"],
      ["Any tips for a beginner learning the guitar?", "any tips"],
      ["Was ist der Unterschied zwischen Zigbee und Z-Wave?", "unterschied zwischen"],
      ["Wie funktioniert der Schlüsselaustausch bei WireGuard?", "wie funktioniert"],
      ["¿Cuál es la diferencia entre una alpaca y una llama?", "diferencia entre"],
      ["Quelle est la différence entre un contacteur et un relais ?", "différence entre"],
      ["В чём разница между TCP и UDP?", "в чём разница"],
      ["夏普比率和索提诺比率有什么区别?", "区别"],
      ["WireGuardの鍵交換の仕組みを教えて", "仕組み"],
      ["지그비와 Z-Wave의 차이가 뭐야?", "차이"]
    ]
    for (const [request, form] of cases) assert.strictEqual(generalQuestionForm(request), form, request)
  })

  it("takes no request about the project's own work for one", () => {
    for (
      const request of [
        "Fix the failing test in extract.ts",
        "Why does the build fail on CI since yesterday?",
        "How do I run the e2e suite locally?",
        "What is the port of the dev server?",
        "这个报错是什么原因?",
        "ビルドエラーの直し方を教えて",
        "Wie starte ich den Server neu?",
        "¿Por qué falla el despliegue?",
        "Kodu nasıl derlerim?"
      ]
    ) assert.isUndefined(generalQuestionForm(request), request)
  })
})
