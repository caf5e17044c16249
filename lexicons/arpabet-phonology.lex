AA0	PH:AA CLASS:vowel HEIGHT:low BACK:back ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0
AA1	PH:AA CLASS:vowel HEIGHT:low BACK:back ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed
AA2	PH:AA CLASS:vowel HEIGHT:low BACK:back ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed
AE0	PH:AE CLASS:vowel HEIGHT:low BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:0
AE1	PH:AE CLASS:vowel HEIGHT:low BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:1 STRESS:stressed
AE2	PH:AE CLASS:vowel HEIGHT:low BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:2 STRESS:stressed
AH0	PH:AH CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:lax VOICE:voiced STRESS:0
AH1	PH:AH CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:lax VOICE:voiced STRESS:1 STRESS:stressed
AH2	PH:AH CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:lax VOICE:voiced STRESS:2 STRESS:stressed
AO0	PH:AO CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:0
AO1	PH:AO CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed
AO2	PH:AO CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed
AW0	PH:AW CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0 DIPHTHONG
AW1	PH:AW CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed DIPHTHONG
AW2	PH:AW CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed DIPHTHONG
AY0	PH:AY CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0 DIPHTHONG
AY1	PH:AY CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed DIPHTHONG
AY2	PH:AY CLASS:vowel HEIGHT:low BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed DIPHTHONG
EH0	PH:EH CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:0
EH1	PH:EH CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:1 STRESS:stressed
EH2	PH:EH CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:2 STRESS:stressed
ER0	PH:ER CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0 RHOTIC
ER1	PH:ER CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed RHOTIC
ER2	PH:ER CLASS:vowel HEIGHT:mid BACK:central ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed RHOTIC
EY0	PH:EY CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0 DIPHTHONG
EY1	PH:EY CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed DIPHTHONG
EY2	PH:EY CLASS:vowel HEIGHT:mid BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed DIPHTHONG
IH0	PH:IH CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:0
IH1	PH:IH CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:1 STRESS:stressed
IH2	PH:IH CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:lax VOICE:voiced STRESS:2 STRESS:stressed
IY0	PH:IY CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:0
IY1	PH:IY CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed
IY2	PH:IY CLASS:vowel HEIGHT:high BACK:front ROUND:unrounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed
OW0	PH:OW CLASS:vowel HEIGHT:mid BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:0 DIPHTHONG
OW1	PH:OW CLASS:vowel HEIGHT:mid BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed DIPHTHONG
OW2	PH:OW CLASS:vowel HEIGHT:mid BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed DIPHTHONG
OY0	PH:OY CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:0 DIPHTHONG
OY1	PH:OY CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed DIPHTHONG
OY2	PH:OY CLASS:vowel HEIGHT:low BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed DIPHTHONG
UH0	PH:UH CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:lax VOICE:voiced STRESS:0
UH1	PH:UH CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:lax VOICE:voiced STRESS:1 STRESS:stressed
UH2	PH:UH CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:lax VOICE:voiced STRESS:2 STRESS:stressed
UW0	PH:UW CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:0
UW1	PH:UW CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:1 STRESS:stressed
UW2	PH:UW CLASS:vowel HEIGHT:high BACK:back ROUND:rounded TENSE:tense VOICE:voiced STRESS:2 STRESS:stressed
B	PH:B CLASS:consonant PLACE:bilabial MANNER:stop VOICE:voiced OBSTRUENT
CH	PH:CH CLASS:consonant PLACE:postalveolar MANNER:affricate VOICE:voiceless OBSTRUENT SIBILANT
D	PH:D CLASS:consonant PLACE:alveolar MANNER:stop VOICE:voiced OBSTRUENT
DH	PH:DH CLASS:consonant PLACE:dental MANNER:fricative VOICE:voiced OBSTRUENT
F	PH:F CLASS:consonant PLACE:labiodental MANNER:fricative VOICE:voiceless OBSTRUENT
G	PH:G CLASS:consonant PLACE:velar MANNER:stop VOICE:voiced OBSTRUENT
HH	PH:HH CLASS:consonant PLACE:glottal MANNER:fricative VOICE:voiceless OBSTRUENT
JH	PH:JH CLASS:consonant PLACE:postalveolar MANNER:affricate VOICE:voiced OBSTRUENT SIBILANT
K	PH:K CLASS:consonant PLACE:velar MANNER:stop VOICE:voiceless OBSTRUENT
L	PH:L CLASS:consonant PLACE:alveolar MANNER:lateral VOICE:voiced SONORANT
M	PH:M CLASS:consonant PLACE:bilabial MANNER:nasal VOICE:voiced SONORANT
N	PH:N CLASS:consonant PLACE:alveolar MANNER:nasal VOICE:voiced SONORANT
NG	PH:NG CLASS:consonant PLACE:velar MANNER:nasal VOICE:voiced SONORANT
P	PH:P CLASS:consonant PLACE:bilabial MANNER:stop VOICE:voiceless OBSTRUENT
R	PH:R CLASS:consonant PLACE:alveolar MANNER:approximant VOICE:voiced SONORANT RHOTIC
S	PH:S CLASS:consonant PLACE:alveolar MANNER:fricative VOICE:voiceless OBSTRUENT SIBILANT
SH	PH:SH CLASS:consonant PLACE:postalveolar MANNER:fricative VOICE:voiceless OBSTRUENT SIBILANT
T	PH:T CLASS:consonant PLACE:alveolar MANNER:stop VOICE:voiceless OBSTRUENT
TH	PH:TH CLASS:consonant PLACE:dental MANNER:fricative VOICE:voiceless OBSTRUENT
V	PH:V CLASS:consonant PLACE:labiodental MANNER:fricative VOICE:voiced OBSTRUENT
W	PH:W CLASS:consonant PLACE:labiovelar MANNER:approximant VOICE:voiced SONORANT ROUND:rounded
Y	PH:Y CLASS:consonant PLACE:palatal MANNER:approximant VOICE:voiced SONORANT
Z	PH:Z CLASS:consonant PLACE:alveolar MANNER:fricative VOICE:voiced OBSTRUENT SIBILANT
ZH	PH:ZH CLASS:consonant PLACE:postalveolar MANNER:fricative VOICE:voiced OBSTRUENT SIBILANT
