# ruff: noqa: E501  (the data: one paragraph a line)
"""Writes this folder's BEIR files (corpus.jsonl, queries.jsonl, qrels/test.tsv) from the
first nine paragraphs of XQuAD-R German and checks them against the source's own offsets;
see README.md for the source and licence. Run: python make.py"""

import json
from pathlib import Path

P = []
P.append(("Super_Bowl_50-1", "Die Verteidigung der Panthers gab nur 308 Punkte ab und belegte den sechsten Platz in der Liga, während sie die NFL mit 24 Interceptions in dieser Kategorie anführte und sich mit vier Pro Bowl-Selektionen rühmen konnte. Pro Bowl Defensive Tackle Kawann Short führte das Team mit 11 Sacks an, erzwang zudem drei Fumbles und erzielte zwei Fumble Recoverys. Mario Addison, ebenfalls Lineman, addierte 6½ Sacks hinzu. Die Panthers-Line präsentierte auch den erfahrenen Defensive End Jared Allen, einen 5-fachen Pro-Bowler, der mit 136 Sacks der aktive Anführer in der NFL-Kategorie Karriere-Sacks war, sowie den Defensive End Kony Ealy, der 5 Sacks in nur 9 Starts erzielte. Nach ihnen wurden zwei der drei Linebacker der Panthers ausgewählt, um im Pro Bowl zu spielen: Thomas Davis und Luke Kuechly. Davis erzielte 5½ Sacks, vier erzwungene Fumbles und vier Interceptions, während Kuechly das Team bei den Tackles anführte (118), zwei Fumbles erzwang und vier Pässe abfing. Carolinas Secondarys bestanden aus dem Pro Bowl-Safety Kurt Coleman, der das Team mit einem Karrierehoch von sieben Interceptions anführte und gleichzeitig 88 Tackles erzielen konnte, und Pro Bowl-Cornerback Josh Norman, der sich während der Saison zur Shutdown Corner entwickelte und vier Interceptions erzielte, von denen zwei zu Touchdowns für sein Team wurden.", [
("56beb4343aeaaa14008c925b", "Wie viele Punkte gab die Verteidigung der Panthers ab?"),
("56beb4343aeaaa14008c925c", "Wie viele Sacks erzielte Jared Allen in seiner Karriere?"),
("56beb4343aeaaa14008c925d", "Wie viele Tackles wurden bei Luke Kuechly registriert?"),
("56beb4343aeaaa14008c925e", "Wie viele Bälle fing Josh Norman ab?"),
("56beb4343aeaaa14008c925f", "Wer hatte in dieser Saison die meisten Sacks im Team?"),
("56d6f3500d65d21400198290", "Wie viele Interceptions wurden der Verteidigung der Panthers im Jahr 2015 angerechnet?"),
("56d6f3500d65d21400198291", "Wer führte die Panther bei den Sacks an?"),
("56d6f3500d65d21400198292", "Wie viele Verteidigungsspieler der Panthers wurden für den Pro Bowl ausgewählt?"),
("56d6f3500d65d21400198293", "Wie viele erzwungene Fumbles hatte Thomas Davis?"),
("56d6f3500d65d21400198294", "Welcher Spieler hatte die meisten Interceptions der Saison?"),
("56d9992fdc89441400fdb59c", "Wie viele Interceptions erzielte die Verteidigung der Panthers in der Saison 2015?"),
("56d9992fdc89441400fdb59e", "Wer erzielte als Carolina Panthers-Starter fünf Sacks in neun Spielen?"),
("56d9992fdc89441400fdb59f", "Wer führte die Panthers 2015 bei den Tackles an?"),
("56d9992fdc89441400fdb5a0", "Mit wie vielen Interceptions erzielte Josh Norman im Jahr 2015 Touchdowns?"),
]))
P.append(("Super_Bowl_50-2", "Die Broncos besiegten die Pittsburgh Steelers in der Divisional Round, 23-16, indem sie in den letzten drei Minuten des Spiels 11 Punkte erzielten. Sie schlugen daraufhin im AFC-Championship-Spiel den verteidigenden Super Bowl XLIX-Champion, die New England Patriots, 20-18, indem sie bei nur 17 Sekunden verbleibender Spielzeit New Englands Versuch, eine 2-Point Conversion zu erzielen, abfingen. Trotz Mannings Problemen mit Interceptions während der Saison verfehlte er in den beiden Playoff-Spielen keine einzige.", [
("56beb7953aeaaa14008c92ab", "Wer verlor in der Divisional Round gegen die Broncos?"),
("56beb7953aeaaa14008c92ac", "Wie viele Punkte erzielten die Broncos in den letzten drei Minuten des Spiels gegen Pittsburgh?"),
("56beb7953aeaaa14008c92ad", "Wer gewann den Super Bowl XLIX?"),
("56beb7953aeaaa14008c92ae", "Wie lautete der Endstand des AFC-Championship-Spiels?"),
("56beb7953aeaaa14008c92af", "Wie viel Zeit verblieb, als den Broncos die Interception gelang, die das AFC-Championship-Spiel entschied?"),
("56bf36b93aeaaa14008c9561", "Welches Team war der Sieger der Divisional Round im Spiel der Broncos gegen die Steelers?"),
("56bf36b93aeaaa14008c9562", "Wie lautete das Endergebnis des Spiels der Broncos gegen die Steelers?"),
("56bf36b93aeaaa14008c9563", "Wer gewann den Super Bowl XLIX?"),
("56bf36b93aeaaa14008c9564", "Wie viele Sekunden Spielzeit verblieben, als die Broncos den Pass abfingen, der das Spiel gewann?"),
("56bf36b93aeaaa14008c9565", "Wer verfehlte während der Playoff-Spiele der Broncos keine Interception?"),
("56d7018a0d65d214001982c2", "Wen schlugen die Broncos in der Divisional Round?"),
("56d7018a0d65d214001982c3", "Wie viele Punkte erzielten die Broncos in den letzten drei Minuten des Pittsburgh-Spiels?"),
("56d7018a0d65d214001982c5", "Wen besiegten die Broncos im AFC-Championship-Spiel?"),
("56d99f99dc89441400fdb628", "Wen schlugen die Broncos 2015, um in ihrer Division zu gewinnen?"),
("56d99f99dc89441400fdb629", "Wen schlugen die Broncos, um AFC-Champion zu werden?"),
("56d99f99dc89441400fdb62c", "Wie viele Sekunden verblieben im Spiel, als die 2-Point Conversion der Patriots fehlschlug?"),
]))
P.append(("Super_Bowl_50-3", "Peyton Manning wurde zum ersten Quarterback, der zwei verschiedene Teams zu mehreren Super Bowls führte. Mit 39 Jahren ist er zudem auch der älteste Quarterback, der je in einem Super Bowl spielte. Vor Manning wurde der Rekord von John Elway gehalten, der im Alter von 38 Jahren die Broncos zum Sieg beim Super Bowl XXXIII führte und derzeit Denvers Executive Vice President of Football Operations und General Manager ist.", [
("56beb86b3aeaaa14008c92bd", "Wie alt war Peyton Manning, als er im Super Bowl 50 spielte?"),
("56beb86b3aeaaa14008c92be", "Wer hielt zuvor den Rekord als ältester Quarterback, der in einem Super Bowl mitspielte?"),
("56beb86b3aeaaa14008c92bf", "Wie alt war John Elway, als er im Super Bowl XXXIII spielte?"),
("56beb86b3aeaaa14008c92c0", "Welche Position hat John Elway derzeit im Broncos-Franchise inne?"),
("56beb86b3aeaaa14008c92c1", "Für wen spielte John Elway im Super Bowl XXXIII?"),
("56bf3fd53aeaaa14008c9591", "Welches Team gewann den Super Bowl XXXIII?"),
("56bf3fd53aeaaa14008c9592", "Wer ist der General Manager der Broncos?"),
("56bf3fd53aeaaa14008c9593", "Wie alt war Elway während seines Sieges im Super Bowl XXXIII?"),
("56bf3fd53aeaaa14008c9594", "Wer hält den Rekord für den ältesten Quarterback in einem Super Bowl-Spiel?"),
("56bf3fd53aeaaa14008c9595", "Für wie viele Teams, die den Super Bowl erreichten, spielte Manning?"),
("56d704430d65d214001982de", "Wie viele verschiedene Teams führte Peyton Manning zum Super Bowl?"),
("56d704430d65d214001982e0", "Wer ist der älteste Quarterback, der je in einem Super Bowl gespielt hat?"),
("56d704430d65d214001982e1", "Wer war vor Manning der älteste Quarterback, der je in einem Super Bowl gespielt hat?"),
("56d704430d65d214001982e2", "Welchen Super Bowl gewann Elway im Alter von 38 Jahren?"),
("56d9a0eadc89441400fdb63e", "Wer war der erste Quarterback, der zwei Teams zu mehr als einem Super Bowl führte?"),
("56d9a0eadc89441400fdb63f", "Wie alt war Manning, als er im Super Bowl 50 mitspielte?"),
("56d9a0eadc89441400fdb640", "Wie heißt der Quarterback, der während des Super Bowl XXXIII 38 Jahre alt war?"),
]))
P.append(("Super_Bowl_50-4", "Die sechs-malige Grammy-Gewinnerin und Oscar-Nominierte Lady Gaga führte die Nationalhymne auf, während die Oscar-Gewinnerin Marlee Matlin in die Amerikanische Gebärdensprache (ASL) übersetzte.", [
("56bec6ac3aeaaa14008c93fd", "Wie viele Grammys gewann Lady Gaga?"),
("56bec6ac3aeaaa14008c93fe", "Was hat Lady Gaga gesungen?"),
("56bec6ac3aeaaa14008c93ff", "Welche Auszeichnung erhielt Marlee Matlin?"),
("56bec6ac3aeaaa14008c9400", "Was übersetzte Marlee Matlin?"),
("56bec6ac3aeaaa14008c9401", "In welche Sprache übersetzte Marlee Matlin die Nationalhymne?"),
("56d20650e7d4791d00902614", "Wer sang die Nationalhymne?"),
("56d20650e7d4791d00902615", "Welche Schauspielerin übersetzte beim Spiel in die Amerikanische Gebärdensprache?"),
("56d7253b0d65d214001983d4", "Wer sang die Nationalhymne beim Super Bowl 50?"),
("56d7253b0d65d214001983d5", "Welcher Schauspieler übersetzte beim Super Bowl 50 die Nationalhymne in die Gebärdensprache?"),
("56d9c455dc89441400fdb7c4", "Wer sang die Nationalhymne beim Super Bowl 50?"),
("56d9c455dc89441400fdb7c5", "Wie viele Grammy Awards hat Lady Gaga laut Text gewonnen?"),
("56d9c455dc89441400fdb7c6", "Wer übersetzte die Nationalhymne beim Super Bowl 50 in die Gebärdensprache?"),
]))
P.append(("Super_Bowl_50-5", "Mit 4:51 verbleibenden Minuten in der regulären Spielzeit brachte Carolina den Ball auf die eigene 24-Yard Line und bekam die Chance, einen spielentscheidenden Drive zu erzielen. Bald darauf standen sie einem 3rd-and-9 gegenüber. Beim nächsten Spielzug nahm Miller Newton den Ball ab und nach mehreren Dives flog der Ball eine weite Strecke nach hinten und wurde von Ward erobert, der ihn fünf Yard auf die 4-Yard Line der Panthers zurückbrachte. Obwohl mehrere Spieler in den Pile sprangen, um zu versuchen, den Ball zurückzugewinnen, tat Newton dies nicht. Sein Mangel an Aggression brachte ihm später heftige Kritik ein. In der Zwischenzeit wurde Denvers Offensive für drei Spielzüge aus der Endzone herausgehalten, aber eine Holding-Strafe für Cornerback Josh Norman gab den Broncos ein neues Set Downs. Dann punktete Anderson bei einem 2-Yard-Touchdown-Run und Manning vollendete einen Pass zu Bennie Fowler für eine 2-Point Conversion. Denver erhielt eine 24-10 Führung mit 3:08 verbleibenden Minuten, was das Spiel im Wesentlichen entschied. Carolina hatte noch zwei weitere Drives, konnte aber keine zwei First Downs erzielen.", [
("56beca913aeaaa14008c946d", "Auf welcher Yard Line begann Carolina mit 4:51 verbleibenden Minuten im Spiel?"),
("56beca913aeaaa14008c946e", "Wer erzielte einen Fumble beim 3rd-and-9?"),
("56beca913aeaaa14008c946f", "Welcher Panther-Verteidiger wurde abgestraft, weil er den Ball beim Third Down festhielt?"),
("56beca913aeaaa14008c9470", "Welcher Spieler erzielte einen Touchdown von der 2-Yard Line aus?"),
("56beca913aeaaa14008c9471", "Wer gewann die erfolgreiche 2-Point Conversion?"),
("56d726b60d65d214001983ea", "Wer nahm Newton den Ball beim 3rd-and-9 ab?"),
("56d726b60d65d214001983eb", "Wer nahm den abgenommenen Ball auf?"),
("56d726b60d65d214001983ec", "Welcher Spieler wurde kritisiert, weil er nicht in den Pile sprang, um den Ball zu retten?"),
("56d726b60d65d214001983ed", "Welcher Panthers-Spieler erhielt eine Strafe, was den Broncos ein neues Set an Downs bescherte?"),
("56d726b60d65d214001983ee", "Wie viel Zeit verblieb im Spiel, als Denver einen Punktestand von 24-10 erreichte?"),
("56d9cb47dc89441400fdb832", "Wie viel Zeit verblieb, als Carolina im vierten Quarter den Ball auf ihre 24-Yard-Line brachte?"),
("56d9cb47dc89441400fdb833", "Wie hieß der Spieler, der Newton zum Ende des vierten Quarters den Ball abnahm?"),
("56d9cb47dc89441400fdb834", "Wie lautet der Nachname des Spielers, der den Ball, den Newton im vierten Quarter verlor, zurückeroberte?"),
("56d9cb47dc89441400fdb835", "Wie viele Spielzüge wurde Denver aus der Endzone herausgehalten, nachdem sie den Ball von Newton bekommen hatten?"),
("56d9cb47dc89441400fdb836", "Wie lautet der Nachname des Spielers, der im vierten Quarter einen 2-Yard-Touchdown erzielte?"),
]))
P.append(("Warsaw-1", "In der Nähe, in Ogród Saski (Sächsischer Garten), war das Sommertheater von 1870 bis 1939 in Betrieb. In der Zwischenkriegszeit umfasste der Theaterkomplex auch das Momus, Warschaus erstes literarisches Kabarett, und Leon Schillers Musiktheater Melodram. Das Wojciech Bogusławski Theater (1922-26) war das beste Beispiel für „Polnisches Monumentaltheater“. Ab Mitte der 1930er Jahre beherbergte das Gebäude des Teatr Wielki auch das Upati Institut für darstellende Kunst - die erste staatliche Akademie für Schauspielkunst mit einer Schauspielabteilung und einer Abteilung für Bühnenleitung.", [
("57339c16d058e614000b5ec5", "Wie lautet der Name der Sächsischen Gärten auf Polnisch?"),
("57339c16d058e614000b5ec6", "Wo befand sich das Sommertheater?"),
("57339c16d058e614000b5ec7", "Wie lange war das Sommertheater in Betrieb?"),
("57339c16d058e614000b5ec8", "Wie hieß das erste literarische Kabarett Warschaus?"),
("57339c16d058e614000b5ec9", "Welches Theater war das beste Beispiel für „Polnisches Monumentaltheater“?"),
]))
P.append(("Warsaw-2", "Ihre lokalen Rivalen, Polonia Warschau, haben deutlich weniger Anhänger. Dennoch gelang es ihnen, die Ekstraklasa-Meisterschaft im Jahr 2000 zu gewinnen. Sie gewannen auch die Landesmeisterschaft von 1946 und holten zwei Mal den Pokal. Das Heimstadion Polonias befindet sich in der Konwiktorska-Straße, zehn Gehminuten nördlich der Altstadt. Polonia wurde 2013 wegen seiner katastrophalen finanziellen Situation aus der Spitzengruppe des Landes verwiesen. Sie spielen nun in der vierten Liga (5. Rang in Polen) – der untersten Profiliga in der Struktur des Polnischen Fußballverbandes (PZPN).", [
("5733a32bd058e614000b5f32", "Wer gewann 2000 die Ekstraklasa-Meisterschaft?"),
("5733a32bd058e614000b5f33", "Wann gewann Polonia Warschau vor 2000 die Landesmeisterschaft?"),
("5733a32bd058e614000b5f34", "Wie oft hat Polonia den Pokal gewonnen?"),
("5733a32bd058e614000b5f35", "Wo befindet sich das Heimstadion Polonias?"),
("5733a32bd058e614000b5f36", "Warum wurde Polonia 2013 aus der Spitzengruppe des Landes verbannt?"),
]))
P.append(("Warsaw-3", "Warschau war während seiner gesamten Existenz eine multikulturelle Stadt. Laut der Volkszählung von 1901 waren von 711.988 Einwohnern 56,2% Katholiken, 35,7% Juden, 5% griechisch-orthodoxe Christen und 2,8% Protestanten. Acht Jahre später, im Jahr 1909, gab es 281.754 Juden (36,9%), 18.189 Protestanten (2,4%) und 2.818 Mariaviten (0,4%). Dies führte zum Bau von Hunderten von religiösen Kultstätten in allen Teilen der Stadt. Die meisten von ihnen wurden nach dem Warschauer Aufstand von 1944 zerstört. Nach dem Krieg rieten die neuen kommunistischen Behörden Polens vom Kirchenbau ab und nur wenige wurden wiederaufgebaut.", [
("57338007d058e614000b5bda", "Welche Art von Stadt ist Warschau schon immer gewesen?"),
("57338007d058e614000b5bdb", "Wie groß war die Bevölkerung Warschaus im Jahr 1901?"),
("57338007d058e614000b5bdc", "Welcher Prozentsatz der Warschauer Bevölkerung war im Jahr 1901 katholisch?"),
("57338007d058e614000b5bdd", "Welcher Prozentsatz der Bevölkerung Warschaus war 1901 protestantisch?"),
("57338007d058e614000b5bde", "Wann wurden die meisten religiösen Kultstätten in Warschau zerstört?"),
]))
P.append(("Warsaw-4", "Die grundlegende Verwaltungseinheit in Polen wird Gemeinde (Gmina) genannt. Eine Stadt ist ebenfalls eine Gemeinde – allerdings besitzt sie ein Stadtrecht. Sowohl Städte als auch Gemeinden werden von einem Bürgermeister regiert – dieser wird in den Gemeinden Vogt (auf Polnisch Wójt) und in den Städten Burmistrz genannt. Einige größere Städte erhalten Anrechte, d.h. Aufgaben und Privilegien, die den Einheiten der zweiten Verwaltungsebene – Landkreise oder Powiaty – gehören. Ein Beispiel für ein solches Anrecht ist die Kfz-Zulassung: Eine Gmina kann keine Autos registrieren, denn dies ist die Aufgabe des Powiat (d.h. eine Kennzeichennummer ist abhängig vom zulassenden Powiat und nicht von der Gmina). Erhält eine Stadt Anrechte, nennt man sie Stadtkreis oder Powiat Grodzki. Solche Städte sind z.B. Lublin, Krakau, Danzig oder Posen. In Warschau haben Bezirke zusätzlich einige Anrechte der Powiaty – wie die bereits erwähnte Kfz-Zulassung. Zum Beispiel besitzen die Bezirke Wola und Ursynów eigene Kennzeichen (und die Autos aus Wola führen andere Kennzeichen als die aus Ursynów). Die Bezirke in Krakau besitzen jedoch beispielsweise keine Powiat-Anrechte. Deshalb sind die Autokennzeichen in Krakau in allen Bezirken vom gleichen Typ.", [
("573380e0d058e614000b5be9", "Wie heißt die grundlegende Verwaltungseinheit in Polen?"),
("573380e0d058e614000b5bea", "Wie heißt die zweite Verwaltungsebene in Polen?"),
("573380e0d058e614000b5beb", "In welchen Bezirken sind die Autokennzeichen alle vom gleichen Typ?"),
]))

LENGTHS = [1335, 517, 422, 193, 1134, 591, 592, 625, 1244]
ANSWERS = [
 [(38, "308"), (527, "136"), (921, "118"), (1026, "Kurt Coleman"), (622, "Kony Ealy"), (246, "Kawann Short"), (120, "24"), (783, "Luke Kuechly."), (332, "zwei"), (179, "vier")],
 [(22, "die Pittsburgh Steelers"), (127, "11"), (246, "New England Patriots"), (268, "20-18"), (293, "17 Sekunden"), (71, "23-16"), (404, "Manning"), (0, "Die Broncos")],
 [(109, "39"), (231, "John Elway"), (269, "38"), (350, "Executive Vice President of Football Operations und General Manager"), (283, "Broncos"), (49, "zwei"), (305, "Super Bowl XXXIII")],
 [(4, "sechs"), (73, "die Nationalhymne"), (39, "Oscar"), (139, "in die Amerikanische Gebärdensprache"), (56, "Lady Gaga"), (125, "Marlee Matlin")],
 [(99, "24"), (265, "Newton"), (759, "Josh Norman"), (822, "Anderson"), (899, "Bennie Fowler"), (258, "Miller"), (367, "Ward"), (980, "3:08"), (4, "4:51"), (672, "drei")],
 [(16, "Ogród Saski"), (29, "Sächsischer Garten"), (76, "1870 bis 1939"), (165, "Momus"), (255, "Das Wojciech Bogusławski Theater")],
 [(22, "Polonia Warschau"), (200, "1946"), (216, "zwei Mal"), (282, "Konwiktorska-Straße"), (361, "wegen seiner katastrophalen finanziellen Situation")],
 [(46, "eine multikulturelle Stadt"), (115, "711.988"), (134, "56,2%"), (202, "2,8%"), (490, "1944")],
 [(50, "Gemeinde"), (443, "Landkreise oder Powiaty"), (1105, "Krakau")],
]
def check() -> None:
    """Every paragraph's length and the answer spans at their offsets, as the source
    gives them: a changed character fails."""
    wrong = []
    for (pid, ctx, _), n, spans in zip(P, LENGTHS, ANSWERS, strict=True):
        if len(ctx) != n:
            wrong.append(f"{pid}: length {len(ctx)}, the source's {n}")
        wrong += [f"{pid}: {text!r} not at {at}" for at, text in spans
                  if ctx[at:at + len(text)] != text]
    assert not wrong, wrong


def write(folder: Path) -> None:
    check()
    (folder / "qrels").mkdir(exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for pid, ctx, _ in P:
            f.write(json.dumps({"_id": pid, "title": "", "text": ctx}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for _, _, qs in P:
            for qid, q in qs:
                f.write(json.dumps({"_id": qid, "text": q}, ensure_ascii=False) + "\n")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for pid, _, qs in P:
            for qid, _ in qs:
                f.write(f"{qid}\t{pid}\t1\n")


if __name__ == "__main__":
    write(Path(__file__).parent)
