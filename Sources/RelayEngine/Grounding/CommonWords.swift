/// English words common enough that, capitalised at the start of a sentence, a line, a list
/// item or in a Title Case heading, they are not taken for proper names — about 1,600 of them:
/// function words, pronouns, the frequent verbs, adjectives and nouns, and the words an
/// assistant starts its sentences with ("Overall", "Sure", "Based"). A small model writes
/// "**Key Findings:** …" and "Here Is The Plan"; without this list every such word would be a
/// claim to check. Lowercase; `CommonWords.contains` folds case and contractions.
enum CommonWords {
    /// Whether `word` (any case, possessive or contraction allowed: "It's", "Don't") is common.
    static func contains(_ word: String) -> Bool {
        let lowered = word.lowercased().replacingApostrophes()
        if set.contains(lowered) { return true }
        for suffix in ["n't", "'s", "'re", "'ve", "'ll", "'d", "'m", "'t"] where lowered.hasSuffix(suffix) {
            if set.contains(String(lowered.dropLast(suffix.count))) { return true }
        }
        return false
    }

    /// Words in capitals that are markers of an engine or a format, not names: "APPROVED",
    /// "REVISION", "PDF", currency codes.
    static let capitalArtifacts: Set<String> = Set("""
        ok approved revision revised todo fyi tldr tl dr na n/a faq eta asap pdf url urls html css json csv \
        xml yaml api apis id ids md txt doc docx ppt xls xlsx png jpg jpeg gif svg zip usd eur gbp jpy chf \
        am pm utc gmt ps nb re fw ai llm llms cli ui ux os pc tv ceo cto cfo hr it qa
        """.split(whereSeparator: \.isWhitespace).map(String.init))

    /// Courtesy titles: "Dr. Ilse Varga" names Ilse Varga; the title itself is no claim.
    static let titles: Set<String> = ["mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "st", "mx", "jr", "sr"]

    /// Lowercase words that may join the capitalised words of one name: "Bank of Lisbon",
    /// "Ludwig van Beethoven", "Isabel de la Cruz".
    static let nameJoiners: Set<String> = ["of", "de", "van", "von", "der", "den", "la", "le", "da", "di", "du", "del", "dos", "das", "y", "bin", "al"]

    /// Words that follow an imperative verb ("Brew it", "Visit the museum") and rarely a name.
    static let objects: Set<String> = ["it", "them", "the", "a", "an", "your", "this", "these", "those", "some", "each",
                                       "every", "me", "us", "him", "her", "my", "our", "their", "up", "out", "any"]

    static let set: Set<String> = Set(list.split(whereSeparator: \.isWhitespace).map(String.init))

    private static let list = """
        a about above across after afterwards again against ago all almost alone along already also although \
        always am among amongst an and another any anybody anyone anything anyway anyways anywhere are around as \
        at away back be became because become becomes becoming been before beforehand behind being below beside \
        besides between beyond both but by can cannot could did do does doing done down during each either else \
        elsewhere enough even ever every everybody everyone everything everywhere except few for former formerly \
        from further had has have having he hence her here hers herself him himself his how however i if in \
        indeed instead into is it its itself just last later latter least less let lets like likely many may \
        me meanwhile might mine more moreover most mostly much must my myself namely neither never nevertheless \
        next no nobody none nor not nothing now nowhere of off often on once one only onto or other others \
        otherwise ought our ours ourselves out over own per perhaps please quite rather really same several she \
        should since so some somebody someone something sometime sometimes somewhat somewhere soon still such \
        than that the their theirs them themselves then there thereafter thereby therefore these they this \
        those though through throughout thus to together too toward towards under unless unlike until up upon \
        us very via was we well were what whatever when whenever where whereas wherever whether which while \
        who whoever whole whom whose why will with within without would yet you your yours yourself yourselves \
        accept accepted add added adding agree agreed allow allowed appear appeared appears apply applied ask \
        asked asking became begin began begun believe believed belong bring brings brought build built buy \
        bought call called calls came carry carried change changed changes check checked choose chose chosen \
        close closed come comes coming consider considered contain contains continue continued could create \
        created creates cut decide decided describe described describes develop developed die died discuss \
        discussed does draw drew drive drove eat end ended ends expect expected explain explained explains \
        fall fell feel feels felt find finds found finish finished follow followed following follows forget \
        get gets getting give given gives giving go goes going gone got gotten grow grew grown happen happened \
        hear heard help helped helps hold holds held hope hoped include included includes including keep keeps \
        kept know known knows learn learned leave leaves left lie lies live lived lives look looked looking looks \
        lose lost love loved make makes making made mean means meant meet meets met mention mentioned move moved \
        need needed needs note noted notes offer offered open opened pay paid pick picked plan planned play played \
        prefer prepare prepared provide provided provides pull put reach reached read reads remain remained \
        remains remember report reported reports require required requires return returned run runs running said \
        say says see seem seemed seems seen sell send sent serve set sets show showed shown shows sit speak \
        spend spent stand start started starts stay stop stopped suggest suggested suggests take taken takes \
        taking talk talked tell tells think thinks thought told took try tried tries turn turned understand \
        use used uses using wait walk want wanted wants watch went win won wo ca wish work worked working works \
        write writes writing written wrote seek sought share shared sharing listed list lists give visit \
        able bad best better big black blue brief certain clear close cold common complete current dark dead \
        deep different difficult due early easy economic entire exact fair far fast final fine free full general \
        good great green grey gray hard heavy high hot huge human important interesting large late legal little \
        local long low main major minor many modern more most national natural necessary new nice old only \
        open original particular past personal physical poor popular possible pretty previous primary private \
        public quick ready real recent red relevant right round serious short significant similar simple single \
        small social special specific strong sure true useful various whole wide wrong young own key basic \
        additional available average overall total top bottom upper lower above below extra further \
        account action actions activity activities age air amount answer answers area areas arm art article \
        attention authority bank bar base bed behaviour behavior benefit benefits bill bit board body book books \
        box boy brother budget building business car card care case cases cause center centre century chance \
        child children city class community company condition control cost costs country couple course court \
        cup data date day days deal death decision degree department design detail details development \
        difference direction door doctor dog cat effect effort end energy environment evening event events \
        evidence example examples experience eye face fact facts family father field figure file files film \
        fire floor food foot force form friend friends front fund future game garden girl goal goals government \
        group groups growth guide hand head health heart history home hospital hotel hour hours house idea ideas \
        image impact industry information interest issue issues item items job kind king land language law lead \
        leader level life light line lines lot man manager market matter meeting member members memory message \
        messages method middle mind minute minutes moment money month months morning mother mouth movement music \
        name names nation nature network news night number numbers office officer order page pages pain paper \
        parent part parts party patient pattern people period person picture piece place places plant player \
        point points police policy position power practice president pressure price prices problem problems \
        process product products program programme project projects property purpose quality question questions \
        range rate reason reasons record records research resource resources response result results rest risk \
        road role room rule rules sale school science season second section sections security sense series \
        service services side sign site situation size skill society son sort sound source sources space staff \
        stage standard state statement step steps story street structure student study style subject success \
        summary support system table task tasks tax team term terms test thing things time times title today \
        tomorrow yesterday tonight town trade training tree truth type types unit user users value values \
        version view voice war water way ways week weeks weekend weight wife window woman women word words \
        world year years spring summer autumn fall winter morning afternoon \
        according actually additionally admittedly again alright also although altogether anyway apparently \
        as basically based briefly certainly clearly consequently conversely currently definitely despite \
        essentially eventually evidently finally firstly first fortunately frankly furthermore generally \
        hello hi hey hopefully ideally importantly in indeed initially instead interestingly lastly likewise \
        luckily naturally nonetheless notably obviously okay ok ohh oh personally possibly potentially \
        presumably previously probably recently regarding regardless respectively secondly similarly \
        sincerely specifically subsequently sure surely thanks thank thirdly typically ultimately \
        unfortunately usually yes yeah yep welcome dear regards great excellent absolutely certainly done \
        conclusion conclusions overview introduction findings finding highlights highlight takeaway takeaways \
        background draft drafts revise review reviewed reviewer reviewers planner writer researcher editor \
        request requested requests context journal journals chat chats agent agents relay relays workspace \
        folder folders output outputs input inputs response responses heading topic topics option options \
        tip tips update updates status verdict approve reject rejected missing unsupported unknown unclear \
        sorry note nb important warning caution reminder tldr observation observations recommendation \
        recommendations suggestion suggestions next previous following below above here there \
        zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred \
        thousand million billion second third fourth fifth sixth seventh eighth ninth tenth half dozen once \
        twice \
        man men girl boy baby kid kids guy guys folks everybody someone \
        north south east west northern southern eastern western central left right \
        january february march april may june july august september october november december \
        monday tuesday wednesday thursday friday saturday sunday \
        act age ago aim art ask bag ball band bear beat beauty bird blood bone born break breakfast bridge \
        brown budget burn call calm camp capital career catch cell chair charge cheap chief choice church \
        claim clean client clock club coach coast coat code coffee collect college colour color common \
        compare computer concern contact cook cool copy corner count cover crime cross crowd culture customer \
        dance danger daily debate deliver demand deny depend desk dinner discover disease dream dress drink \
        drop dry duty earth east economy edge education election element email employee enjoy enter \
        equipment error escape estimate exam exercise exist fail fear feature feed fight fill finance fish \
        fit flat flight flow flower fly focus foreign forest forward frame fresh fruit fuel fun funny gain \
        gas gift glass gold grade grand grass ground guard guess gun hair hall hang hat hate hide hill hit \
        hole holiday horse host hunt ice ill income increase index inside island join joke judge jump kill \
        kitchen knee knife lack lady lake laugh lay layer league lesson letter lift limit link lip listen \
        load loan lock lunch machine mail map mark mass master match meal measure meat medical metal mile \
        milk mission mix model modern motor mountain mouse nose object ocean oil opinion outside page \
        paint pair park pass path peace pen phone plane plate pleasure pocket poem pool pop post pound \
        prize proof protect proud quarter queen quiet race radio rain raise rare reply rich ride ring rise \
        river rock roof root rose rough route royal safe salt sand save scale scene score screen sea seat \
        secret sector seed select senior sentence shape sharp sheet ship shirt shoe shop shot shoulder shout \
        sick sight silver sing sister skin sky sleep slow smile smoke snow soft soil soldier song soul soup \
        speech speed spirit sport spot square star station stone store storm stress strike stuff sugar suit \
        sun swim target taste tea teacher tear technology temperature tend text theme theory thin throw \
        ticket tie tip tiny tired tool tooth total touch tour tower track traffic train travel treat trial \
        trip trouble truck trust twin uncle union upset urban vast video village visit volume vote wake \
        wall warm wash waste wave wealth wear weather wheel white wild wind wine wing winner wire wise wish \
        wood worry yard yellow \
        founded established located origin origins pricing hours opening contact address location menu timeline \
        schedule revenue sales profit customers suppliers partners risks references citations appendix glossary \
        definitions methods methodology analysis discussion limitations abstract brew steep boil pour mix stir \
        serve email reserve avoid pack ensure verify confirm compare summarise summarize outline describe list \
        overview quick recap key main top useful practical general final additional further other various
        """
}

extension String {
    /// The text with typographic apostrophes (’ ‘ ʼ) as "'", so "Varga’s" and "Varga's" compare equal.
    func replacingApostrophes() -> String {
        func typographic(_ scalar: Unicode.Scalar) -> Bool { scalar == "\u{2019}" || scalar == "\u{2018}" || scalar == "\u{02BC}" }
        guard unicodeScalars.contains(where: typographic) else { return self }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: unicodeScalars.map { typographic($0) ? "'" : $0 })
        return String(result)
    }
}
