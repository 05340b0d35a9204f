"""Thirty answers to SciFact-style health questions, written and labelled for
benchmarks/criteria.py by a ragmark developer (no public data: this file is the set; CC0).
Each item: the question, an answer, and the label for the criterion "The answer is
written in plain words that a reader without medical training understands: any
technical term it needs is explained." True: plain (15), False: not (15). Some are near
the line on purpose: a plain answer with one explained term (true), a short answer
with one unexplained term (false)."""

ITEMS = [
    ("Does vitamin D lower the risk of bone fractures in older adults?",
     "Taking vitamin D alone did not clearly prevent broken bones in older people; "
     "taking it together with calcium lowered the risk a little.", True),
    ("Does vitamin D lower the risk of bone fractures in older adults?",
     "Cholecalciferol monotherapy showed no significant reduction in fracture incidence; "
     "co-administration with calcium yielded a modest RR reduction.", False),
    ("Is aspirin linked to stomach bleeding?",
     "Yes. Aspirin can irritate the lining of the stomach, and people who take it every "
     "day are more likely to have bleeding there.", True),
    ("Is aspirin linked to stomach bleeding?",
     "Yes; COX-1 inhibition reduces mucosal prostaglandin synthesis, raising the "
     "incidence of upper GI haemorrhage.", False),
    ("Can regular exercise lower blood pressure?",
     "Yes. People who walked briskly or cycled for about half an hour most days had "
     "lower blood pressure after a few months.", True),
    ("Can regular exercise lower blood pressure?",
     "Aerobic training produced a mean reduction in SBP and DBP of 5 and 3 mmHg in "
     "normotensive and hypertensive cohorts.", False),
    ("Does smoking damage the lungs' small airways?",
     "Yes. Smoking narrows and scars the tiny air tubes deep in the lungs, which makes "
     "breathing harder over time.", True),
    ("Does smoking damage the lungs' small airways?",
     "Yes: smokers show bronchiolar remodelling with goblet cell hyperplasia and "
     "peribronchiolar fibrosis.", False),
    ("Do statins reduce heart attacks?",
     "Yes. Statins are pills that lower cholesterol, a fat in the blood; people taking "
     "them had fewer heart attacks.", True),
    ("Do statins reduce heart attacks?",
     "HMG-CoA reductase inhibitors reduced MI events, driven by LDL-C lowering.", False),
    ("Is sleep loss linked to weight gain?",
     "People who slept less than six hours a night tended to gain more weight, partly "
     "because they felt hungrier.", True),
    ("Is sleep loss linked to weight gain?",
     "Sleep restriction elevates ghrelin and suppresses leptin, promoting positive "
     "energy balance and adiposity.", False),
    ("Does breastfeeding protect babies from infections?",
     "Babies who were breastfed had fewer ear and stomach infections in their first "
     "year than babies fed formula.", True),
    ("Does breastfeeding protect babies from infections?",
     "Breastfed infants had lower incidence of otitis media and gastroenteritis, "
     "attributed to secretory IgA transfer.", False),
    ("Can antibiotics treat the common cold?",
     "No. Colds are caused by viruses, and antibiotics only kill bacteria, so they do "
     "not help a cold get better.", True),
    ("Can antibiotics treat the common cold?",
     "No; rhinoviral URTIs are not responsive to antibacterial agents.", False),
    ("Does drinking coffee raise the risk of heart disease?",
     "Not for most people: those who drank a few cups a day did not have more heart "
     "disease than those who drank none.", True),
    ("Does drinking coffee raise the risk of heart disease?",
     "Moderate caffeine intake showed no association with incident CVD after "
     "multivariable adjustment.", False),
    ("Is high salt intake linked to stroke?",
     "Yes. Eating a lot of salt raises blood pressure, and high blood pressure makes a "
     "stroke more likely.", True),
    ("Is high salt intake linked to stroke?",
     "Yes, sodium intake correlated with cerebrovascular events via hypertension.", False),
    ("Does the HPV vaccine prevent cervical cancer?",
     "Yes. The HPV vaccine protects against a virus that can cause cancer of the cervix, "
     "the opening of the womb; vaccinated women had far fewer early cancers.", True),
    ("Does the HPV vaccine prevent cervical cancer?",
     "Yes; vaccination reduced CIN3+ lesions attributable to HPV 16/18.", False),
    ("Can stress make the body fight infections less well?",
     "Yes. Long periods of stress weaken the body's defences, so people under stress "
     "caught colds more often.", True),
    ("Can stress make the body fight infections less well?",
     "Chronic stress induces glucocorticoid-mediated immunosuppression, increasing "
     "susceptibility to viral infection.", False),
    ("Does obesity raise the risk of type 2 diabetes?",
     "Yes. Carrying a lot of extra weight makes the body respond less to insulin, the "
     "hormone that moves sugar out of the blood, so diabetes becomes more likely.", True),
    ("Does obesity raise the risk of type 2 diabetes?",
     "Yes, via insulin resistance and beta-cell dysfunction.", False),
    ("Is air pollution linked to asthma attacks?",
     "Yes. On days with dirty air, more people with asthma went to hospital because "
     "they could not breathe well.", True),
    ("Is air pollution linked to asthma attacks?",
     "PM2.5 exposure was associated with increased asthma exacerbations and ED "
     "visits.", False),
    ("Does folic acid in pregnancy prevent birth defects?",
     "Yes. Women who took folic acid, a B vitamin, before and early in pregnancy had "
     "fewer babies born with defects of the spine.", True),
    ("Does folic acid in pregnancy prevent birth defects?",
     "Periconceptional folate supplementation reduced NTD prevalence.", False),
]
