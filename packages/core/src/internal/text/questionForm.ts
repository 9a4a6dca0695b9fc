/**
 * Whether a request is phrased as a question about the world rather than about the project: "what's the difference
 * between the Sharpe and the Sortino ratio", "who designed Innovation", "wie funktioniert der Schlüsselaustausch bei
 * WireGuard", "有什么区别", "おすすめ". A coding agent is asked such things too, and a memory that shares one of their
 * words (a project named Lumen, a bot called Pulse, a memory on Redis) is then beside the point: the selector asks
 * such a request for more evidence (`generalQuestionEvidence`). The forms are the question's frame (difference,
 * definition, how something works, who made it, its history, a recommendation), in the languages the selector's
 * labelled sets measure, plus French and Russian; a request in another language is never taken for one.
 */

/** The forms, as patterns over the lower-cased request, by language: en, de, es, fr, ru, zh, ja, ko. */
const FORMS: ReadonlyArray<RegExp> = [
  /\bdifferences? between\b|\bwhat(?:'s| is| are) the differences?\b/,
  /\bwhat (?:is|are) (?:a|an)\b|\bwhat does (?:the (?:term|word) )?\S+ (?:mean|stand for)\b/,
  /\bwho (?:invented|designed|created|wrote|founded|won|discovered|coined)\b|\bhistory of\b/,
  /\b(?:can|could) you recommend\b|\bany (?:tips|recommendations)\b|\btips (?:for|on)\b|\bfor (?:a )?beginners?\b/,
  /\bunterschied(?:e)? zwischen\b|\bwas ist (?:ein|eine)\b|\bwas bedeutet\b|\bwie funktionier(?:t|en)\b/,
  /\bwer hat\b.*\b(?:erfunden|entworfen|entwickelt|gewonnen|geschrieben|gegründet)\b|\bgeschichte (?:des|der|von)\b/,
  /\bempfiehlst\b|\bempfehlen\b|\btipps?\b|\bfür anfänger\b/,
  /\bdiferencias? entre\b|\bqu[eé] es (?:un|una)\b|\bqu[eé] significa\b|\bc[oó]mo funcionan?\b/,
  /\bqui[eé]n (?:invent|diseñ|cre[oó]|escribi|fund|gan)|\bhistoria de\b/,
  /\brecomienda|\brecomendar(?:ías|ias)?\b|\bconsejos?\b|\bpara principiantes\b/,
  /\bdiff[ée]rences? entre\b|\bqu'est-ce qu|\bque signifie\b|\bcomment fonctionnen?t?\b/,
  /\bqui a (?:invent|con[çc]u|cr[ée]{2}|[ée]crit|fond|gagn)|\bhistoire d[eu]\b/,
  /\brecommand|\bconseils?\b|\bpour d[ée]butants?\b/,
  /разниц[аы] между|чем отлича|в ч[её]м разница|что такое|что означает|как работает/,
  /кто (?:изобр|придума|созда|написал|выиграл|основал)|истори[яию]/,
  /посоветуй|порекомендуй|советы|для начинающих/,
  /区别|差别|有什么不同|什么是|是什么意思|原理|谁(?:发明|设计|创造|写|赢)|历史|推荐|入门/,
  /違い|とは|仕組み|誰が(?:発明|設計|作っ|書い|優勝)|歴史|おすすめ|お勧め|オススメ|初心者/,
  /차이|란 무엇|원리|누가 (?:발명|설계|만들|썼|우승)|역사|추천|초보/
]

/** The request's general-question form, as written in it ("difference between"), or undefined. */
export const generalQuestionForm = (request: string): string | undefined => {
  const text = request.toLowerCase()
  for (const pattern of FORMS) {
    const found = pattern.exec(text)
    if (found !== null) return found[0]
  }
  return undefined
}
