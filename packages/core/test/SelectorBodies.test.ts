/**
 * The offline selector on what generalizes (issue 22): a long memory found by what only its body says when the
 * whole body's terms are given (`bodies`, from `TermCache`), and a family of near-duplicate notes collapsed so it
 * does not fill the five slots.
 */
import { assert, describe, it } from "@effect/vitest"
import { analyzeBody } from "../src/internal/text/selectorIndex.js"
import { MANIFEST_MAX_LINES, manifestCandidates } from "../src/ModelSelector.js"
import {
  collapseFamilies,
  defaultOfflineOptions,
  explainSelection,
  familyOf,
  selectRelevantMemories
} from "../src/Selector.js"
import { memoryHeader } from "./support/memoryHeader.js"

const header = memoryHeader

const filler = (topic: string, lines: number) =>
  Array.from({ length: lines }, (_, i) => `Step ${i}: check the ${topic} settings and write down what changed.`)
    .join("\n")

describe("whole bodies", () => {
  const longBody = `${filler("renderer", 120)}\nWhen the import fails with TextureImporterOverflowException, ` +
    "split the atlas into two sheets.\n"
  const candidates = [
    header("project_rendering.md", "Rendering notes", "How the renderer is set up", longBody.slice(0, 1024)),
    header("project_deploy.md", "Deploy", "How releases are shipped", "Tag, build, upload."),
    header("feedback_style.md", "Reply style", "Keep answers short", "Short answers.")
  ]
  const query = "the build dies with TextureImporterOverflowException, what now?"

  it("a phrase only deep in a long body is found with the body's terms, not with the head alone", () => {
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates }), [])
    const bodies = new Map([["project_rendering.md", analyzeBody(longBody)]])
    assert.deepStrictEqual(selectRelevantMemories({ query, candidates, bodies }), ["project_rendering.md"])
  })
})

describe("words found together in one passage", () => {
  // the same three words in both bodies: all in one sentence of one memory, in three sections of the other (where
  // each is written twice, so its evidence alone is the higher)
  const scattered = "## Payments\nThe webhook endpoint lives in api/hooks.ts; every webhook is logged.\n" +
    `${filler("billing", 12)}\n## Queue\nA failed job gets a retry after a minute, and a retry after an hour.\n` +
    `${filler("queue", 12)}\n## Keys\nThe signature key rotates monthly; the signature is HMAC-SHA256.\n` +
    filler("keys", 12)
  const together = `${filler("checkout", 12)}\nWhen a webhook fails its signature check, do not retry it: the ` +
    `sender signed it with an old key.\n${filler("refund", 12)}`
  const candidates = [
    header("project_payments.md", "Payments overview", "How the payment service is laid out", scattered.slice(0, 1024)),
    header("feedback_events.md", "Stripe events", "What we learned handling Stripe events", together.slice(0, 1024)),
    header("project_deploy.md", "Deploy", "How releases are shipped", "Tag, build, upload.")
  ]
  const bodies = new Map([
    ["project_payments.md", analyzeBody(scattered)],
    ["feedback_events.md", analyzeBody(together)]
  ])
  const request = { query: "a webhook keeps failing the signature check, should we retry it?", candidates, bodies }

  it("rank the memory that says them in one sentence above one that names them apart, and cut the other", () => {
    assert.deepStrictEqual(selectRelevantMemories(request), ["feedback_events.md"])
    const [kept, cut] = explainSelection(request).considered
    assert.strictEqual(kept!.path, "feedback_events.md")
    assert.includeMembers([...kept!.together], ["webhook", "signatur", "retri"])
    // its evidence is the lower: proximity orders the two and sets the relative cut, it adds no evidence
    assert.isBelow(kept!.score, cut!.score)
    assert.isAbove(kept!.score + kept!.proximity, cut!.score + cut!.proximity)
    assert.strictEqual(cut!.verdict, "below-relative-cut")
    assert.match(cut!.reason, /^cut: \d\.\d\d \+ \d\.\d\d nearby \(\d\.\d\d\) is below 0\.9 × the top score/)
    // without it, the words' counts decide, and the memory that names them apart wins
    assert.deepStrictEqual(
      selectRelevantMemories(request, { ...defaultOfflineOptions, proximityWeight: 0 }),
      ["project_payments.md"]
    )
  })

  it("never lift a memory over an absolute bar", () => {
    const body = "Loose ends: the webhook signature check runs before the retry queue."
    const explained = explainSelection({
      query: "why does the webhook signature check fail before the retry for invoices in the staging cluster?",
      candidates: [header("notes.md", "Notes", "Loose notes", body), ...candidates.slice(2)],
      bodies: new Map([["notes.md", analyzeBody(body)]])
    })
    const only = explained.considered[0]!
    assert.deepStrictEqual(explained.selected, [])
    // four of the request's words in one sentence: with them its evidence would clear the body-only bar (1.00)
    assert.includeMembers([...only.together], ["webhook", "signatur", "check", "retri"])
    assert.isAtLeast(only.score + only.proximity, 1)
    assert.isBelow(only.score, 1)
    assert.strictEqual(only.verdict, "body-only")
  })
})

describe("evidence in a body alone", () => {
  const plan = "The bot logs in, walks to spawn and checks the chunk count.\n" +
    "It runs on Netty like the server, one Netty event loop per connection.\n" +
    "Netty decodes each packet before the bot sees it.\n"
  const candidates = [
    header("rd-bot-plan.md", "Bot plan", "Plan for the test bot that joins the server", plan),
    header("project_deploy.md", "Deploy", "How releases are shipped", "Tag, build, upload.")
  ]
  const bodies = new Map([["rd-bot-plan.md", analyzeBody(plan)]])

  it("a few words shared only with a body do not surface the memory for an unrelated request", () => {
    const request = {
      query: "In the Netty framework, what's the difference between the boss and worker EventLoopGroup?",
      candidates,
      bodies
    }
    assert.deepStrictEqual(selectRelevantMemories(request), [])
    // it clears the evidence floor (0.40) and is the best match: only the body-only bar cuts it
    const cut = explainSelection(request).considered[0]!
    assert.isAbove(cut.score, 0.4)
    assert.strictEqual(cut.path, "rd-bot-plan.md")
    assert.strictEqual(cut.verdict, "body-only")
    assert.strictEqual(cut.headerScore, 0)
    assert.match(cut.reason, /evidence found in the body needs 1\.00/)
  })

  it("the same body found by its header's words, or by most of the request, is kept", () => {
    assert.deepStrictEqual(
      selectRelevantMemories({ query: "what does the test bot do on the server?", candidates, bodies }),
      [
        "rd-bot-plan.md"
      ]
    )
    assert.deepStrictEqual(
      selectRelevantMemories({ query: "netty event loop thread per connection", candidates, bodies }),
      ["rd-bot-plan.md"]
    )
  })
})

describe("near-duplicate families", () => {
  it("names a family by the file name without digits and separators", () => {
    assert.strictEqual(familyOf("mcpe-v45-protocol.md"), familyOf("notes/mcpe-v81-protocol.md"))
    assert.notStrictEqual(familyOf("mcpe-v45-protocol.md"), familyOf("netty-protocol.md"))
  })

  it("keeps a second member only when it matched a term the first did not", () => {
    const ranked = [
      { path: "mcpe-v45-protocol.md", matched: ["protocol", "45"] },
      { path: "mcpe-v81-protocol.md", matched: ["protocol"] },
      { path: "mcpe-v91-protocol.md", matched: ["protocol", "91"] },
      { path: "netty-protocol.md", matched: ["protocol"] }
    ]
    assert.deepStrictEqual(collapseFamilies(ranked).map((m) => m.path), [
      "mcpe-v45-protocol.md",
      "mcpe-v91-protocol.md",
      "netty-protocol.md"
    ])
  })

  it("one family does not fill the five slots", () => {
    const candidates = [9, 11, 27, 45, 81, 91].map((v) =>
      header(`mcpe-v${v}-protocol.md`, `MCPE v${v} Protocol`, `Protocol ${v} packet IDs and login handshake`)
    )
    const selected = selectRelevantMemories({ query: "how does the MCPE login handshake packet work?", candidates })
    assert.strictEqual(selected.length, 1, selected.join(", "))
  })
})

describe("requests in another language than the memories", () => {
  const candidates = [
    header("project_design_assets.md", "Design assets", "Where the mockups and screens are kept", "In .local/."),
    header("project_deploy.md", "Deploy", "How releases are shipped", "Tag, build, upload."),
    header("feedback_style.md", "Reply style", "Keep answers short", "Short answers.")
  ]

  it("a Spanish request finds an English memory by a word both use ('mockups')", () => {
    assert.deepStrictEqual(selectRelevantMemories({ query: "¿dónde van los mockups?", candidates }), [
      "project_design_assets.md"
    ])
  })

  it("a Chinese request sharing only function words with a memory gets nothing", () => {
    const chinese = [
      header("project_factor.md", "因子入库", "因子入库的标准和流程", "每个因子都要先跑一个回测，怎么跑见下文。")
    ]
    assert.deepStrictEqual(selectRelevantMemories({ query: "CSS怎么让一个div水平垂直居中", candidates: chinese }), [])
    assert.deepStrictEqual(selectRelevantMemories({ query: "因子入库标准是什么", candidates: chinese }), [
      "project_factor.md"
    ])
  })
})

describe("Japanese", () => {
  const candidates = [
    header(
      "unity_pitfalls.md",
      "Unity の落とし穴",
      "実機で踏んだ問題と対処のまとめ",
      "リモートの白い手メッシュで指が曲がらない: ボーンが全部 null だった。"
    ),
    header("camera_fleet.md", "カメラ一覧", "使っているカメラと接続方法", "Pixel 7a と iPhone を DroidCam で繋ぐ。"),
    header("sdk_decision.md", "SDK の選定", "Meta XR SDK を採用した理由", "OpenXR より機能が多い。")
  ]

  it("a request finds a memory by the one-kanji words they share (手, 指, 曲がる)", () => {
    // without its lone kanji the request is "相手" and "全然": nothing to find the memory by
    assert.deepStrictEqual(selectRelevantMemories({ query: "相手の手の指が全然曲がらない", candidates }), [
      "unity_pitfalls.md"
    ])
    assert.deepStrictEqual(selectRelevantMemories({ query: "相手が全然来ない", candidates }), [])
  })
})

describe("Korean", () => {
  const candidates = [
    header(
      "os-dependent-accept.md",
      "os-dependent-accept",
      "OS 동작에 의존하는 버그는 무리하게 고치지 말고 감수",
      "사례: 설정앱 cold start 시 작업표시줄이 foreground 를 점유해 인디 완전소멸."
    ),
    header("feedback_version.md", "버전 형식", "버전 번호는 날짜 형식으로 쓴다", "예: 2026.06.08"),
    header("feedback_workflow.md", "작업 규칙", "커밋 전에 빌드와 테스트를 돌린다", "빌드가 깨지면 먼저 고친다.")
  ]

  it("a compound meets its parts however it is spaced (설정 앱, 설정앱)", () => {
    // the memory writes "설정앱" as one word, the request "설정 앱" as two: "설정" is the compound's first bigram
    const spacedRequest = explainSelection({ query: "설정 앱", candidates })
    assert.deepStrictEqual(spacedRequest.considered.map((c) => [c.path, c.matched.map((m) => m.term)]), [
      ["os-dependent-accept.md", ["설정"]]
    ])
    // and the other way round: a request's "설정앱" meets a memory's "설정 앱"
    const spacedMemory = [header("settings.md", "설정 앱", "설정 앱의 창 위치를 기억한다", "창 크기도 저장한다.")]
    assert.deepStrictEqual(
      explainSelection({ query: "설정앱", candidates: spacedMemory }).considered.map((c) => c.path),
      ["settings.md"]
    )
  })
})

describe("Russian", () => {
  const candidates = [
    header(
      "feedback_migrations.md",
      "Миграции через goose",
      "Схему базы данных меняем только миграциями goose, никогда руками",
      "Все изменения схемы БД — миграции goose."
    ),
    header("project_orders.md", "Сервис заказов", "Как устроен сервис заказов", "Репозиторий заказов на PostgreSQL."),
    header("user_profile.md", "Профиль", "Бэкенд-разработчик, пишет на Go", "Предпочитает короткие ответы.")
  ]

  it("a request finds a memory through other cases of its words, and an off-topic one nothing", () => {
    // "базу данных" (accusative) and "заказа" (genitive) against the memories' "базы данных" and "заказов"
    assert.deepStrictEqual(selectRelevantMemories({ query: "как поменять схему в базе данных?", candidates }), [
      "feedback_migrations.md"
    ])
    assert.deepStrictEqual(selectRelevantMemories({ query: "где лежит репозиторий заказа?", candidates }), [
      "project_orders.md"
    ])
    assert.deepStrictEqual(selectRelevantMemories({ query: "напиши стихотворение про осень", candidates }), [])
  })

  it("stems a memory whose body has no Russian stopword as Russian: its header is read in its body's language", () => {
    const terse = [
      header("reference_staging.md", "Staging", "Доступы к staging: хост базы, где лежат пароли", ""),
      header("user_profile.md", "Профиль", "Бэкенд-разработчик, пишет на Go", "Предпочитает короткие ответы.")
    ]
    // the whole body's terms, as recall has them from the term cache: "Vault, путь secret/db. Хост базы staging-db"
    const bodies = new Map([[
      "reference_staging.md",
      analyzeBody("Vault, путь secret/db. Хост базы staging-db.internal")
    ]])
    const explained = explainSelection({ query: "где пароль от стейджа?", candidates: terse, bodies })
    assert.deepStrictEqual(explained.selected, ["reference_staging.md"])
    assert.deepStrictEqual(explained.unknownWords, [], "\"пароль\" meets the description's \"пароли\"")
  })

  it("finds a memory writing a word in Latin letters though another writes it in Cyrillic", () => {
    const mixed = [
      header(
        "reference_env_staging.md",
        "Staging",
        "Доступы к staging: хост базы, где лежат пароли",
        "Vault, путь secret/db."
      ),
      header("project_release.md", "Релиз", "Как выкатываем релиз", "Сначала на стейдж, потом на прод."),
      header("user_profile.md", "Профиль", "Бэкенд-разработчик, пишет на Go", "Предпочитает короткие ответы.")
    ]
    const explained = explainSelection({ query: "где пароль от стейджа?", candidates: mixed })
    assert.deepStrictEqual(explained.selected, ["reference_env_staging.md"])
    const staging = explained.considered.find((c) => c.path === "reference_env_staging.md")!
    assert.deepInclude(staging.matched, {
      term: "стейдж",
      fields: ["name", "description", "path"],
      translatedAs: ["staging"]
    })
  })
})

describe("the model selector's manifest budget", () => {
  it("lists every candidate that fits, else the 200 with the most evidence, in the scan's order", () => {
    const notes = Array.from({ length: 250 }, (_, i) => header(`note_${i}.md`, `Note ${i}`, `Roadmap meeting ${i}`))
    const kafka = header("kafka.md", "Kafka consumers", "Consumer group rebalance storms and their fix")
    const candidates = [...notes, kafka]
    const listed = manifestCandidates({ query: "why does the kafka consumer group rebalance?", candidates })
    assert.strictEqual(listed.length, MANIFEST_MAX_LINES)
    assert.include(listed.map((m) => m.path), "kafka.md")
    assert.deepStrictEqual(listed.slice(0, 3).map((m) => m.path), ["note_0.md", "note_1.md", "note_2.md"])
    assert.strictEqual(manifestCandidates({ query: "x y", candidates: notes.slice(0, 10) }).length, 10)
  })
})
